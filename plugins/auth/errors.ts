/** Error codes of the auth plugin. */
export const AUTH_SECRET_MISSING = "AUTH_SECRET_MISSING";
/** A secret under 32 characters with NODE_ENV=production. */
export const AUTH_SECRET_TOO_SHORT = "AUTH_SECRET_TOO_SHORT";
export const AUTH_SCHEMA_MISSING = "AUTH_SCHEMA_MISSING";
export const AUTH_PEER_MISSING = "AUTH_PEER_MISSING";
export const AUTH_SCHEMA_INCOMPLETE = "AUTH_SCHEMA_INCOMPLETE";
export const AUTH_EXTEND_LATE = "AUTH_EXTEND_LATE";
