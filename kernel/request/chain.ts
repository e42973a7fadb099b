import type { HttpMiddleware } from "../middleware.js";
import type { RequestEvent } from "../event.js";

/** What a handler answers: a response at once, or a promise of one. */
export type Answer = Response | Promise<Response>;

/** Middleware marked `atOnce`, as the chain calls it. */
type AtOnce = (event: RequestEvent, next: () => Answer) => Answer;

/**
 * Composes middleware once, at build; the result calls `final` innermost. Middleware whose `passes`
 * says so is stepped over, so a request that no middleware acts on reaches `final` directly and gets
 * its answer as `final` gave it: at once when `final` answered at once.
 */
export function chain(middleware: readonly HttpMiddleware[], final: (event: RequestEvent) => Answer): (event: RequestEvent) => Answer {
  return middleware.reduceRight<(event: RequestEvent) => Answer>((next, mw) => {
    const run = mw.atOnce
      ? (event: RequestEvent) => (mw as unknown as AtOnce)(event, () => next(event))
      : (event: RequestEvent) => mw(event, () => promised(next(event)));
    if (!mw.passes) return run;
    return (event) => (mw.passes!(event) ? next(event) : run(event));
  }, final);
}

/** Composes middleware once, at build; the result calls `final` innermost and always answers with a promise. */
export function compose(
  middleware: readonly HttpMiddleware[],
  final: (event: RequestEvent) => Answer,
): (event: RequestEvent) => Promise<Response> {
  const run = chain(middleware, final);
  return (event) => promised(run(event));
}

export function promised(answer: Answer): Promise<Response> {
  return answer instanceof Promise ? answer : Promise.resolve(answer);
}
