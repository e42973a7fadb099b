import type { Answer } from "./chain.js";
import type { RequestFacts } from "./facts.js";

/**
 * A built app's Fetch handler without the promise: `handle()` as a transport calls it. A request
 * answered at once (a raw route that returns a `Response`, with no middleware acting on it) is
 * answered with the `Response` itself, so the transport can write it at once (`serve()`'s Node
 * adapter then skips its promise and its close listener). Keyed by a symbol: no part of `BuiltApp`'s
 * documented shape.
 */
export const RESPOND = Symbol.for("trellis.respond");

export type Respond = (request: Request, facts?: RequestFacts) => Answer;

/** A route handler's result as a response: a `Response` as is, `undefined` as 204, anything else as JSON. */
export function responseOf(result: unknown): Answer {
  if (result instanceof Promise) return result.then(toResponse);
  return toResponse(result);
}

function toResponse(result: unknown): Response {
  if (result instanceof Response) return result;
  if (result === undefined) return new Response(null, { status: 204 });
  return Response.json(result);
}
