/** Error codes of the jobs plugin (see docs/errors.md). */
/** `.jobs()` on SQLite: pg-boss needs PostgreSQL (embedded or a server). */
export const JOBS_SQLITE = "JOBS_SQLITE";
/** pg-boss is not installed. */
export const JOBS_PEER_MISSING = "JOBS_PEER_MISSING";
/** A job or cron name defined twice. */
export const JOBS_DUPLICATE = "JOBS_DUPLICATE";
/** A bad job name, option, cron expression or time zone. */
export const JOBS_BAD_OPTION = "JOBS_BAD_OPTION";
/** `define()` after the engine started (definitions belong to build time). */
export const JOBS_LATE_DEFINE = "JOBS_LATE_DEFINE";
/** `send()` to a name nothing defined. */
export const JOBS_UNKNOWN = "JOBS_UNKNOWN";
/** `send()` with data the job's `input` schema refuses (a 400 when it happens in a procedure). */
export const JOBS_BAD_DATA = "JOBS_BAD_DATA";
