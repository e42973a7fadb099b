/** Error codes of the rate-limit plugin. */
export const RATE_LIMIT_INVALID = "RATE_LIMIT_INVALID";
