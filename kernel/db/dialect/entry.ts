/**
 * `trellis/db`: dialects for the two families beyond the embedded default, with Trellis' value
 * rules (bigint and decimal as strings, timestamps as Dates, UTC calendar dates, foreign keys on).
 */
export { postgresDialect, type PostgresDialectOptions } from "./postgres.js";
export { sqliteDialect, type SqliteDialectOptions } from "./sqlite.js";
export { PGliteDialect, type PGliteDialectConfig } from "./pglite.js";
export { AcquireTimeoutError, DEFAULT_ACQUIRE_TIMEOUT_MS } from "./mutex.js";
export { localLive, postgresLive, type PostgresLiveOptions, type ListeningLiveProvider, type LiveListener } from "./live-providers.js";
