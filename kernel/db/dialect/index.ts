// The database connection layer: one dialect per family, all with the same value rules
// (family.ts) and reentrant transactions (reentrant.ts).
export { PGliteDialect, type PGliteDialectConfig, type PGliteLike } from "./pglite.js";
export { postgresDialect, type PostgresDialectOptions } from "./postgres.js";
export { sqliteDialect, type SqliteDialectOptions } from "./sqlite.js";
export { reentrant, ReentrantDialect } from "./reentrant.js";
export { AcquireTimeoutError, DEFAULT_ACQUIRE_TIMEOUT_MS } from "./mutex.js";
export { pgliteTypeOptions } from "./family.js";
