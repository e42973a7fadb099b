/** Error codes of the backups plugin (see docs/errors.md). */
/** A bad `every`, `to`, `keep` or `url`. */
export const BACKUPS_BAD_OPTION = "BACKUPS_BAD_OPTION";
/** The database cannot be backed up from the app (SQLite, or PostgreSQL without a URL for pg_dump). */
export const BACKUPS_UNSUPPORTED = "BACKUPS_UNSUPPORTED";
/** `to: "storage"` on an app without a storage adapter. */
export const BACKUPS_NO_STORAGE = "BACKUPS_NO_STORAGE";
/** pg_dump is not installed where the app runs, or it failed. */
export const BACKUPS_PG_DUMP = "BACKUPS_PG_DUMP";
