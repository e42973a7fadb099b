/** Error codes of the auth plugin. */
export const AUTH_SECRET_MISSING = "AUTH_SECRET_MISSING";
export const AUTH_SCHEMA_MISSING = "AUTH_SCHEMA_MISSING";
export const AUTH_PEER_MISSING = "AUTH_PEER_MISSING";
