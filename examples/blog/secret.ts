/** A development secret, good for a local run only. */
export const DEVELOPMENT_SECRET = "trellis-blog-development-secret-change-me";

/**
 * The auth secret: `AUTH_SECRET`, or the development secret outside production. In production a
 * missing secret is an error, since anyone who reads this file could forge sessions with it.
 * Generate one with `openssl rand -base64 32`.
 */
export function authSecret(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AUTH_SECRET) return env.AUTH_SECRET;
  if (env.NODE_ENV === "production") {
    throw new Error("AUTH_SECRET is not set: refusing to start in production with the development secret. Generate one with `openssl rand -base64 32`.");
  }
  return DEVELOPMENT_SECRET;
}
