/** Error codes of the openapi plugin. */
export const OPENAPI_PEER_MISSING = "OPENAPI_PEER_MISSING";
