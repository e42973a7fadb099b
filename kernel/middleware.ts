import type { RequestEvent } from "./event.js";

/** HTTP middleware: wraps every request. Call `next()` to continue, or return a response to answer. */
export type HttpMiddleware = ((event: RequestEvent, next: () => Promise<Response>) => Promise<Response>) & {
  /** Shown by `kernel.describe()`; by convention `<plugin>:<what>`. */
  displayName?: string;
};

/** Composes middleware once, at build; the result calls `final` innermost. */
export function compose(
  middleware: readonly HttpMiddleware[],
  final: (event: RequestEvent) => Promise<Response>,
): (event: RequestEvent) => Promise<Response> {
  return middleware.reduceRight<(event: RequestEvent) => Promise<Response>>(
    (next, mw) => (event) => mw(event, () => next(event)),
    final,
  );
}
