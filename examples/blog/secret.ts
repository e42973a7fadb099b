/** A development secret, good for a local run only. */
export const DEVELOPMENT_SECRET = "trellis-blog-development-secret-change-me";

/**
 * The auth secret: `AUTH_SECRET`, or the development secret outside production. In production a
 * missing secret is an error (`AUTH_SECRET_MISSING` at start), since anyone who reads this file could
 * forge sessions with it.
 * Generate one with `openssl rand -base64 32`.
 */
export function authSecret(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AUTH_SECRET) return env.AUTH_SECRET;
  // In production no fallback: `.auth()` then refuses to start with AUTH_SECRET_MISSING, naming AUTH_SECRET.
  if (env.NODE_ENV === "production") return "";
  return DEVELOPMENT_SECRET;
}
