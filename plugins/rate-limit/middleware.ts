import {
  RpcError,
  callerAddress,
  carriesCredential,
  errorResponse,
  type ErrorSource,
  type HttpMiddleware,
  type RequestEvent,
  type SessionUser,
} from "../../kernel/index.js";
import type { RateLimitConfig } from "./index.js";
import type { RateLimitHit, RateLimitStore } from "../../kernel/index.js";

export interface LimiterOptions extends RateLimitConfig {
  store: RateLimitStore;
  /** Path prefixes, matched by segment (`/rpc` covers `/rpc` and `/rpc/...`, never `/rpcx`). */
  paths: readonly string[];
  report(error: unknown, source: ErrorSource): void;
}

/**
 * The fixed-window limiter. Not `async` on the common path: an exempt request hands `next()`'s
 * promise straight through, and an anonymous request with the memory store is counted without
 * waiting on anything.
 */
export function limiter(options: LimiterOptions): HttpMiddleware {
  const { max, windowMs, store, paths } = options;
  const limitText = String(max);
  let failing = false;

  const limited = (path: string) => paths.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  const preflight = (event: RequestEvent) => event.method === "OPTIONS" && event.headers.has("access-control-request-method");

  const answer = (event: RequestEvent, hit: RateLimitHit, next: () => Promise<Response>): Promise<Response> => {
    if (failing) failing = false;
    const reset = Math.max(0, Math.ceil((hit.resetAt - Date.now()) / 1000));
    const resetText = String(reset);
    event.setHeader("RateLimit-Limit", limitText);
    event.setHeader("RateLimit-Remaining", String(Math.max(0, max - hit.count)));
    event.setHeader("RateLimit-Reset", resetText);
    if (hit.count <= max) return next();
    event.setHeader("Retry-After", resetText);
    const message = `Too many requests: the limit is ${max} per ${windowMs} ms; retry in ${reset} s`;
    return Promise.resolve(errorResponse(new RpcError("TOO_MANY_REQUESTS", { status: 429, message }), event.isRpc));
  };

  // A store outage is reported once (not once per request), then follows the configured policy.
  const storeFailed = (event: RequestEvent, error: unknown, next: () => Promise<Response>): Promise<Response> => {
    if (!failing) {
      failing = true;
      options.report(new Error("The rate-limit store failed; requests are " + (options.onStoreError === "closed" ? "refused" : "let through"), { cause: error }), event.isRpc ? "rpc" : "rest");
    }
    if (options.onStoreError !== "closed") return next();
    event.setHeader("Retry-After", "1");
    const refusal = new RpcError("SERVICE_UNAVAILABLE", { status: 503, message: "The rate limit cannot be checked right now; retry shortly" });
    return Promise.resolve(errorResponse(refusal, event.isRpc));
  };

  const count = (event: RequestEvent, key: string, next: () => Promise<Response>): Promise<Response> => {
    let hit: RateLimitHit | Promise<RateLimitHit>;
    try {
      hit = store.hit(key, windowMs);
    } catch (error) {
      return storeFailed(event, error, next);
    }
    if (!(hit instanceof Promise)) return answer(event, hit, next);
    return hit.then(
      (resolved) => answer(event, resolved, next),
      (error) => storeFailed(event, error, next),
    );
  };

  const keyOf = (event: RequestEvent, user: SessionUser | null): string | Promise<string> =>
    options.key ? options.key(event, user) : user ? `user:${user.id}` : `ip:${callerAddress(event) ?? "unknown"}`;

  const middleware: HttpMiddleware = (event, next) => {
    if (!limited(event.path) || preflight(event)) return next();
    if (options.skip) {
      const skipped = options.skip(event);
      if (skipped instanceof Promise) return skipped.then((yes) => (yes ? next() : identify(event, next)));
      if (skipped) return next();
    }
    return identify(event, next);
  };

  // Anonymous callers (no credential header) need no session lookup at all.
  const identify = (event: RequestEvent, next: () => Promise<Response>): Promise<Response> => {
    if (!carriesCredential(event.headers)) return keyed(event, keyOf(event, null), next);
    return event.session().then(({ user }) => keyed(event, keyOf(event, user), next));
  };

  const keyed = (event: RequestEvent, key: string | Promise<string>, next: () => Promise<Response>) =>
    key instanceof Promise ? key.then((resolved) => count(event, resolved, next)) : count(event, key, next);

  middleware.displayName = "rate-limit:window";
  return middleware;
}
