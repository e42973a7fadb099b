import { ORPCError } from "@orpc/server";
import { redactPath } from "./log/redact-url.js";
import type { RequestEvent } from "./event.js";
import { describeError, formatIssue, issuesOf } from "./log/describe-error.js";
import type { Logger } from "./log/logger.js";

/**
 * The deliberate error. It is oRPC's own error type, so every surface (RPC, REST, MCP, routes) maps
 * it to its status, and it never reaches `onError`.
 */
export { ORPCError as RpcError };

/** Where an unexpected failure happened. */
export type ErrorSource = "rpc" | "rest" | "route" | "mcp" | "job";

/** What `onError` learns about a failure: its surface and, when it served a request, which one. */
export interface ErrorInfo {
  source: ErrorSource;
  /** The request's id: its `X-Request-Id`, or the one generated for it (sent back on the response). */
  requestId?: string;
  method?: string;
  path?: string;
  /** The procedure that failed, when the request ran one. */
  procedure?: string;
}

export type OnError = (error: unknown, info: ErrorInfo) => void;

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

/** The request a failure served, as `onError` and the logs name it (tokens in its path redacted). */
export function requestInfo(event: RequestEvent): Omit<ErrorInfo, "source"> {
  return { requestId: event.requestId, method: event.method, path: redactPath(event.path), procedure: event.procedureName };
}

/** Calls `onError` without letting a throwing reporter take the request down with it. */
export function report(onError: OnError, error: unknown, source: ErrorSource, event?: RequestEvent): void {
  try {
    onError(error, event ? { source, ...requestInfo(event) } : { source });
  } catch (reporterError) {
    console.error("[trellis] onError threw while reporting a failure:", reporterError);
  }
}

/**
 * The default `onError`: the failure, where it happened and its stack (validation issues as
 * `path: message` lines), through the app's logger, or on the console when logging is off.
 */
export function defaultOnError(logger?: Logger): OnError {
  return (error, info) => {
    const where = info.procedure ?? (info.path ? `${info.method} ${info.path}` : undefined);
    const title = `Unexpected ${info.source} failure${where ? ` in ${where}` : ""}`;
    if (logger) {
      const issues = issuesOf(error);
      logger.error({ ...info, err: error, ...(issues ? { issues: issues.map(formatIssue) } : {}) }, title);
      return;
    }
    const request = info.requestId ? ` (request ${info.requestId})` : "";
    console.error(`[trellis] ${title}${request}:\n${describeError(error)}`);
  };
}
