/** What `trellis new --auth` can add beside email and password. Kept apart so the CLI lists them without loading `new`. */
export const AUTH_METHODS = ["github", "google", "passkeys", "2fa"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** The optional peers each method needs, at the versions Trellis is tested with. */
export const AUTH_PEERS: Record<AuthMethod, string[]> = {
  github: [],
  google: [],
  passkeys: ["@better-auth/passkey"],
  "2fa": [],
};
