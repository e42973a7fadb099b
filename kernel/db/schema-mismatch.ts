import { ORPCError } from "@orpc/server";

export const SCHEMA_MISMATCH_MESSAGE =
  "Service unavailable: the database's schema no longer matches this server's version (a newer version changed a table it reads); try again shortly";

// PostgreSQL: undefined_table, undefined_column. They come from an app whose migrations have not
// run yet, from a replica of the old version querying a table a contract step reshaped during a
// rolling upgrade (docs/operations.md), or from a query that is simply wrong: the gate tells which
// (judgeSchemaError in gate.ts).
const CODES = new Set(["42P01", "42703"]);
// SQLite says it in words only (SQLITE_ERROR).
const SQLITE = /^(no such (table|column):|table \S+ has no column named )/;

/** True when the database says a table or column this query names does not exist. */
export function isSchemaMismatch(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && CODES.has(code)) return true;
    if (code === "SQLITE_ERROR" && typeof message === "string" && SQLITE.test(message)) return true;
    current = cause;
  }
  return false;
}

/**
 * A 503, not a 500, when the database is newer than this server: the request was fine and a replica
 * of the new version serves it, so a load balancer retrying elsewhere (or the caller, shortly)
 * succeeds. Still reported to `onError`.
 */
export function schemaMismatch(): ORPCError<"SERVICE_UNAVAILABLE", undefined> {
  return new ORPCError("SERVICE_UNAVAILABLE", { status: 503, message: SCHEMA_MISMATCH_MESSAGE });
}
