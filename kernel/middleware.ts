import type { RequestEvent } from "./event.js";

/** HTTP middleware: wraps every request. Call `next()` to continue, or return a response to answer. */
export type HttpMiddleware = ((event: RequestEvent, next: () => Promise<Response>) => Promise<Response>) & {
  /** Shown by `kernel.describe()`; by convention `<plugin>:<what>`. */
  displayName?: string;
  /**
   * True when, for this request, the middleware would do nothing but call `next()` and return its
   * answer (a body limit on a GET, telemetry with nothing to record): the kernel then skips it, and
   * the request pays for no closure and no promise on its account. Read on every request, so cheap.
   */
  passes?(event: RequestEvent): boolean;
  /**
   * True when the middleware takes `next()`'s answer as it comes, a `Response` at once or a promise
   * of one (`Response | Promise<Response>`), and may itself answer at once: a request answered at
   * once then stays so through it (the telemetry plugin's metrics do). Left out, `next()` always
   * returns a promise.
   */
  atOnce?: boolean;
};
