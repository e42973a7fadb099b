/** Error codes of the organizations plugin. */
/** `.auth({ organization })` options, or a tenant resource, without `.auth({ organizations: true })` on the schema. */
export const ORGANIZATIONS_SCHEMA_MISSING = "ORGANIZATIONS_SCHEMA_MISSING";
/** A request to a tenant-scoped surface with no active organization (or one the caller no longer belongs to). */
export const NO_ACTIVE_ORGANIZATION = "NO_ACTIVE_ORGANIZATION";
