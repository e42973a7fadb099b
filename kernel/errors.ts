import { ORPCError } from "@orpc/server";

/**
 * The deliberate error. It is oRPC's own error type, so every surface (RPC, REST, MCP, routes) maps
 * it to its status, and it never reaches `onError`.
 */
export { ORPCError as RpcError };

/** Where an unexpected failure happened. */
export type ErrorSource = "rpc" | "rest" | "route" | "mcp";
export type OnError = (error: unknown, info: { source: ErrorSource }) => void;

/** A build-time or configuration error, tagged with a code and the plugin and hook it came from. */
export class TrellisError extends Error {
  override name = "TrellisError";
  readonly code: string;
  readonly plugin?: string;
  readonly hook?: string;
  constructor(code: string, message: string, options: { plugin?: string; hook?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.plugin = options.plugin;
    this.hook = options.hook;
  }
}

/** The JSON error body every non-RPC surface sends: `{ code, status, message, data? }`. */
export function errorBody(error: ORPCError<any, any>): Record<string, unknown> {
  const body: Record<string, unknown> = { code: error.code, status: error.status, message: error.message };
  if (error.data !== undefined) body.data = error.data;
  return body;
}

/**
 * A JSON error response. Under `/rpc/**` the body is wrapped in the RPC envelope so the typed client
 * decodes it like an error thrown by a procedure.
 */
export function errorResponse(error: ORPCError<any, any>, rpc: boolean): Response {
  const body = rpc ? { json: { defined: false, ...errorBody(error) } } : errorBody(error);
  return Response.json(body, { status: error.status });
}

/** Calls `onError` without letting a throwing reporter take the request down with it. */
export function report(onError: OnError, error: unknown, source: ErrorSource): void {
  try {
    onError(error, { source });
  } catch (reporterError) {
    console.error("[trellis] onError threw while reporting a failure:", reporterError);
  }
}

export const defaultOnError: OnError = (error, { source }) => {
  console.error(`[trellis] unexpected ${source} failure:`, error);
};
