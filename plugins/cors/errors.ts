/** Error codes of the CORS plugin. */
export const CORS_WILDCARD_CREDENTIALS = "CORS_WILDCARD_CREDENTIALS";
