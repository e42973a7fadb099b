import { ORPCError } from "@orpc/server";

export const SCHEMA_MISMATCH_MESSAGE =
  "Service unavailable: the database's schema no longer matches this server's version (a newer version changed a table it reads); try again shortly";

// PostgreSQL: undefined_table, undefined_column. During a rolling upgrade these come from a
// replica of the old version querying a table a contract step reshaped (docs/operations.md).
const CODES = new Set(["42P01", "42703"]);

/** True when PostgreSQL says a table or column this query names does not exist. */
export function isSchemaMismatch(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === "string" && CODES.has(code)) return true;
    current = cause;
  }
  return false;
}

/**
 * A 503, not a 500: the request was fine and a replica of the new version serves it, so a load
 * balancer retrying elsewhere (or the caller, shortly) succeeds. Still reported to `onError`: outside
 * an upgrade the same error is a bug (a raw query naming a missing column).
 */
export function schemaMismatch(): ORPCError<"SERVICE_UNAVAILABLE", undefined> {
  return new ORPCError("SERVICE_UNAVAILABLE", { status: 503, message: SCHEMA_MISMATCH_MESSAGE });
}
