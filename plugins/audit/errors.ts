/** Build-time refusals of `.audit()`, each naming what to change. */
export const AUDIT_BAD_RETAIN = "AUDIT_BAD_RETAIN";
export const AUDIT_UNKNOWN_TABLE = "AUDIT_UNKNOWN_TABLE";
