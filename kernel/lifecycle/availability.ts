import { ORPCError } from "@orpc/server";

/**
 * Whether the app can serve. `starting`: its setup (database connection, plugin `ready` taps) has
 * not finished, or its schema is not migrated yet (or a migration runs); `failed`: the last attempt failed (the next request or health probe tries again);
 * `ready`; `closed`: `close()` was called.
 */
export type AppState = "starting" | "ready" | "failed" | "closed";

/** The 503 a caller gets while the app cannot serve. */
export function unavailable(message: string): ORPCError<"SERVICE_UNAVAILABLE", undefined> {
  return new ORPCError("SERVICE_UNAVAILABLE", { status: 503, message });
}

export const UNAVAILABLE_MESSAGES = Object.freeze({
  setup: "Service unavailable: the database is not reachable yet (setup failed; it is retried on the next request)",
  closed: "Service unavailable: the app is shut down",
  starting: "Service unavailable: the app is starting (its database schema is not migrated yet); try again shortly",
  lost: "Service unavailable: the database connection was lost; try again shortly",
});

// Node's socket errors, and Trellis' own codes for a database that is not there.
const CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "DB_UNREACHABLE", "DB_LOGIN_FAILED", "DB_NOT_FOUND", "KERNEL_CLOSED"]);
// SQLSTATE class 08 (connection exception), and the server shutting down or starting (57P01-57P03).
// 08P01 (protocol violation) is not among them: it is the database refusing one statement (over
// 65,535 bound parameters, say) on a connection that still works.
const SQLSTATE = /^(08(?!P01)[0-9A-Z]{3}|57P0[123])$/;
// Drivers that say it only in words: pg, Kysely after destroy(), PGlite after close(), better-sqlite3.
const MESSAGES = /Connection terminated|Cannot use a pool after calling end|driver has already been destroyed|PGlite is closed|database connection is not open|connection error|timeout exceeded when trying to connect/i;

/** True when `error` (or one of its causes) says the database cannot be reached, rather than that a query was wrong. */
export function isConnectionLost(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && (CODES.has(code) || SQLSTATE.test(code))) return true;
    if (typeof message === "string" && MESSAGES.test(message)) return true;
    current = cause;
  }
  return false;
}

/**
 * True when the request failed because its client hung up (the body stream was cut: Node's
 * `aborted` error, or the request's signal fired). Nobody waits for the answer, and it is not a
 * failure of the app: never reported, never a 503.
 */
export function isClientGone(error: unknown, request?: Request): boolean {
  if (request?.signal.aborted) return true;
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (code === "ECONNRESET" && message === "aborted") return true;
    current = cause;
  }
  return false;
}

/** The answer to a client that hung up (nginx's 499): only the request log ever sees it. */
export function clientGone(): ORPCError<"CLIENT_CLOSED_REQUEST", undefined> {
  return new ORPCError("CLIENT_CLOSED_REQUEST", { status: 499, message: "Client closed the request" });
}
