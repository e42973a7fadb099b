/** Error codes of the admin plugin (docs/errors.md lists them with the rest). */
export const ADMIN_BAD_PATH = "ADMIN_BAD_PATH";
export const ADMIN_TWO_FACTOR_MISSING = "ADMIN_TWO_FACTOR_MISSING";
