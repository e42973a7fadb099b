import { ORPCError } from "@orpc/client";

/**
 * The error a failed call rejects with, on the in-process client and on `createClient` alike:
 * `{ code, status, message, data? }`. The same class the server throws (`RpcError` from `trellis`).
 */
export { ORPCError as RpcError };

/** The codes Trellis answers with; any other string a procedure throws is accepted too. */
export type RpcErrorCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_SUPPORTED"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_MANY_REQUESTS"
  | "INTERNAL_SERVER_ERROR"
  | (string & {});

/**
 * Whether `error` is an `RpcError`, with `code` when given: `if (isRpcError(error, "NOT_FOUND"))`
 * narrows `error` so `error.code`, `error.status` and `error.data` are typed, without importing oRPC.
 */
export function isRpcError<const C extends RpcErrorCode = RpcErrorCode>(error: unknown, code?: C): error is ORPCError<C, unknown> {
  return error instanceof ORPCError && (code === undefined || error.code === code);
}
