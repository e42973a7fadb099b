/** Error codes of the resources plugin. */
export const RESOURCE_TABLE_MISSING = "RESOURCE_TABLE_MISSING";
export const RESOURCE_NO_PRIMARY_KEY = "RESOURCE_NO_PRIMARY_KEY";
export const RESOURCE_OWNER_COLUMN_MISSING = "RESOURCE_OWNER_COLUMN_MISSING";
export const RESOURCE_OWNER_ON_CREATE = "RESOURCE_OWNER_ON_CREATE";
export const RESOURCE_WHERE_ON_CREATE = "RESOURCE_WHERE_ON_CREATE";
/** A `where` rule that does not fit its table (an unknown column, relation or operator). */
export const RESOURCE_RULE_INVALID = "RESOURCE_RULE_INVALID";
export const RESOURCE_WRITABLE_AND_READONLY = "RESOURCE_WRITABLE_AND_READONLY";
export const RESOURCE_UNKNOWN_COLUMN = "RESOURCE_UNKNOWN_COLUMN";
export const RESOURCE_UNKNOWN_RELATION = "RESOURCE_UNKNOWN_RELATION";
export const RESOURCE_DUPLICATE = "RESOURCE_DUPLICATE";
export const RESOURCE_LIVE_NO_PROVIDER = "RESOURCE_LIVE_NO_PROVIDER";
/** `live` limits that cannot be applied (a cap below 1, a fractional count, a bad interval). */
export const RESOURCE_LIVE_INVALID = "RESOURCE_LIVE_INVALID";
/** A scoped include whose related table has no resource: there is no rule to apply. */
export const RESOURCE_INCLUDE_UNSCOPABLE = "RESOURCE_INCLUDE_UNSCOPABLE";
/** A warning, not an error: an unscoped include returns rows a related rule would hide. */
export const RESOURCE_INCLUDE_BYPASS = "RESOURCE_INCLUDE_BYPASS";
/** A `hooks` option that is not an object of the known hook functions. */
export const RESOURCE_HOOKS_INVALID = "RESOURCE_HOOKS_INVALID";
/** `softDelete` on a table without a nullable `deletedAt` timestamp, or a bad `purgeAfter`. */
export const RESOURCE_SOFT_DELETE = "RESOURCE_SOFT_DELETE";
/** A tenant-scoped resource in an app whose schema declares no organizations. */
export const RESOURCE_TENANT_NO_ORGANIZATIONS = "RESOURCE_TENANT_NO_ORGANIZATIONS";
/** `history` on a resource whose table the audit log does not record (no `.audit()`, or the table left out). */
export const RESOURCE_HISTORY_NOT_AUDITED = "RESOURCE_HISTORY_NOT_AUDITED";
