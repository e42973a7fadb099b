import { ORPCError } from "@orpc/server";

export const DISK_FULL_MESSAGE = "Insufficient storage: the database's disk is full, so the write was not saved; reads still work. Free space on the database's volume and retry";

// PostgreSQL and PGlite: SQLSTATE 53100 (disk_full, "could not extend file ..."); SQLite: SQLITE_FULL;
// Node's own ENOSPC when a file write fails.
const CODES = new Set(["53100", "SQLITE_FULL", "ENOSPC"]);

/** True when `error` (or one of its causes) says the database's volume is out of space. */
export function isDiskFull(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === "string" && CODES.has(code)) return true;
    current = cause;
  }
  return false;
}

/**
 * The 507 a write gets when the disk is full: the caller's request was fine and nothing was saved,
 * but retrying at once will not help (unlike a 503), so it says what the operator must do.
 */
export function diskFull(): ORPCError<"INSUFFICIENT_STORAGE", undefined> {
  return new ORPCError("INSUFFICIENT_STORAGE", { status: 507, message: DISK_FULL_MESSAGE });
}
