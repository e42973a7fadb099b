import type { RequestEvent } from "../event.js";
import type { Logger } from "./logger.js";
import { redactPath } from "./redact-url.js";

/**
 * Where middleware puts fields of its own for the request's line (the telemetry plugin's trace id):
 * a registered symbol, so a plugin sets it with `Symbol.for("trellis.logFields")` and no import.
 */
export const LOG_FIELDS = Symbol.for("trellis.logFields");

/**
 * One line per request: `POST /rpc/post/list 200 3.1 ms` with the request id, the procedure, the
 * signed-in user's id and, for an error answer, its message. A 5xx is logged at error level. The
 * path has its tokens redacted (`/api/auth/reset-password/[redacted]`); the query is never logged.
 */
export function logRequest(logger: Logger, event: RequestEvent, status: number, ms: number): void {
  const durationMs = Math.round(ms * 10) / 10;
  const path = redactPath(event.path);
  const fields: Record<string, unknown> = { requestId: event.requestId, method: event.method, path, status, durationMs };
  const procedure = event.procedureName;
  if (procedure !== undefined) fields.procedure = procedure;
  // The session as already resolved for the request; the log line never looks one up.
  const state = event.sessionState;
  const userId = state && !(state instanceof Promise) ? state.user?.id : undefined;
  if (userId !== undefined) fields.userId = userId;
  if (status >= 400 && event.error) fields.error = event.error.message;
  const extra = (event as unknown as Record<symbol, Record<string, unknown> | undefined>)[LOG_FIELDS];
  if (extra) Object.assign(fields, extra);
  const message = `${event.method} ${path} ${status} ${durationMs} ms`;
  if (status >= 500) logger.error(fields, message);
  else logger.info(fields, message);
}
