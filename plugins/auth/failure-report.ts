import { AsyncLocalStorage } from "node:async_hooks";
import { isAPIError } from "better-auth/api";
import type { BetterAuthOptions } from "better-auth";
import { redactPath, type RequestEvent } from "../../kernel/index.js";

type Report = (error: unknown, event: RequestEvent) => void;

/**
 * The auth library answers its own failures (a database error under sign-in, say) with a bare 500
 * and only logs them. Trellis reports each to `onError` with the request it served: the library's
 * `onAPIError.onError` sees the error, and the request is known through the handler's async scope.
 * A 500 that no error explained is reported too, so none goes unseen. Refusals (4xx) are the
 * library's answers, never reported.
 */
export function failureReporter(report: Report) {
  const scope = new AsyncLocalStorage<{ event: RequestEvent; reported: boolean }>();
  return {
    /** The `onAPIError` option, chaining the integrator's own `onError` when there is one. */
    options(given: BetterAuthOptions["onAPIError"]): BetterAuthOptions["onAPIError"] {
      return {
        ...given,
        onError(error, context) {
          const current = scope.getStore();
          if (current && (!isAPIError(error) || error.statusCode >= 500)) {
            current.reported = true;
            report(error, current.event);
          }
          given?.onError?.(error, context);
        },
      };
    },
    /** Runs the library's handler for one request, reporting a 500 nothing else explained. */
    async handle(event: RequestEvent, run: () => Promise<Response>): Promise<Response> {
      const current = { event, reported: false };
      const response = await scope.run(current, run);
      if (response.status >= 500 && !current.reported) report(new Error(`The auth library answered ${response.status} to ${event.method} ${redactPath(event.path)}`), event);
      return response;
    },
  };
}
