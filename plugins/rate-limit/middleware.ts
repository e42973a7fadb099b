import {
  RpcError,
  callerBucket,
  carriesCredential,
  errorResponse,
  type ErrorSource,
  type HttpMiddleware,
  type RequestEvent,
  type SessionUser,
} from "../../kernel/index.js";
import type { RateLimitConfig } from "./index.js";
import type { RateLimitCharge, RateLimitHit, RateLimitStore } from "../../kernel/index.js";

/**
 * What the limiter lends other plugins: `charge(event, cost)` counts `cost` more against every key
 * the request was counted under (its client address, and its caller's own key), for a call that
 * carries several (a batch of N items costs N: the request's own count plus N - 1). Over either
 * budget it sets the `RateLimit-*` and `Retry-After` headers and throws 429 before the work runs.
 * A request the limiter did not count (an exempt path, `skip`, `client()`) is not charged.
 */
export interface LimiterOptions extends RateLimitConfig {
  store: RateLimitStore;
  /** Path prefixes, matched by segment (`/rpc` covers `/rpc` and `/rpc/...`, never `/rpcx`). */
  paths: readonly string[];
  report(error: unknown, source: ErrorSource): void;
}

/**
 * The fixed-window limiter. Every request is first counted against its client address, before any
 * credential is read: a guessed API key, bearer token or cookie costs like any other request (its
 * 401 carries the `RateLimit-*` headers), and once the address is over its budget nothing is looked
 * up at all. A signed-in caller (or a custom `key`) is then counted against its own key as well, and
 * the tighter of the two budgets is the one reported.
 *
 * Not `async` on the common path: an exempt request hands `next()`'s promise straight through, and
 * an anonymous request with the memory store is counted without waiting on anything.
 */
export function limiter(options: LimiterOptions): HttpMiddleware & RateLimitCharge {
  const { max, windowMs, store, paths } = options;
  const addressMax = options.maxPerAddress ?? max;
  let failing = false;
  /** The keys each request was counted under, with their budgets, for `charge`. */
  const counted = new WeakMap<RequestEvent, Array<[key: string, limit: number]>>();
  const remember = (event: RequestEvent, key: string, limit: number) => {
    const keys = counted.get(event);
    if (keys) keys.push([key, limit]);
    else counted.set(event, [[key, limit]]);
  };

  const limited = (path: string) => paths.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  const preflight = (event: RequestEvent) => event.method === "OPTIONS" && event.headers.has("access-control-request-method");

  /** Sets the `RateLimit-*` headers of one budget; true when the request is within it. */
  const report = (event: RequestEvent, hit: RateLimitHit, limit: number): boolean => {
    if (failing) failing = false;
    const reset = String(Math.max(0, Math.ceil((hit.resetAt - Date.now()) / 1000)));
    event.setHeader("RateLimit-Limit", String(limit));
    event.setHeader("RateLimit-Remaining", String(Math.max(0, limit - hit.count)));
    event.setHeader("RateLimit-Reset", reset);
    if (hit.count <= limit) return true;
    event.setHeader("Retry-After", reset);
    return false;
  };

  const refuse = (event: RequestEvent, limit: number): Promise<Response> => {
    const message = `Too many requests: the limit is ${limit} per ${windowMs} ms; retry in ${event.responseHeaders.get("Retry-After")} s`;
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

  /** Counts one hit on `key`, then hands the result on; a failing store follows `onStoreError`. */
  const count = (
    event: RequestEvent,
    key: string,
    then: (hit: RateLimitHit) => Promise<Response>,
    next: () => Promise<Response>,
  ): Promise<Response> => {
    let hit: RateLimitHit | Promise<RateLimitHit>;
    try {
      hit = store.hit(key, windowMs);
    } catch (error) {
      return storeFailed(event, error, next);
    }
    if (!(hit instanceof Promise)) return then(hit);
    return hit.then(then, (error) => storeFailed(event, error, next));
  };

  const middleware: HttpMiddleware = (event, next) => {
    if (!limited(event.path) || preflight(event)) return next();
    if (options.skip) {
      const skipped = options.skip(event);
      if (skipped instanceof Promise) return skipped.then((yes) => (yes ? next() : byAddress(event, next)));
      if (skipped) return next();
    }
    return byAddress(event, next);
  };

  const byAddress = (event: RequestEvent, next: () => Promise<Response>): Promise<Response> => {
    const address = `ip:${callerBucket(event) ?? "unknown"}`;
    return count(
      event,
      address,
      (hit) => {
        remember(event, address, addressMax);
        // The headers are set before the lookup, so a refused credential answers with them.
        if (!report(event, hit, addressMax)) return refuse(event, addressMax);
        // Anonymous callers (no credential header) need no session lookup at all.
        if (!carriesCredential(event.headers)) return options.key ? byKey(event, address, hit, options.key(event, null), next) : next();
        return event.session().then(({ user }) => {
          const key = options.key ? options.key(event, user) : user ? `user:${user.id}` : address;
          return byKey(event, address, hit, key, next);
        });
      },
      next,
    );
  };

  /** The caller's own budget, when it is not the address's; the tighter one is reported. */
  const byKey = (event: RequestEvent, address: string, addressHit: RateLimitHit, key: string | Promise<string>, next: () => Promise<Response>): Promise<Response> => {
    if (key instanceof Promise) return key.then((resolved) => byKey(event, address, addressHit, resolved, next));
    if (key === address) return next();
    return count(
      event,
      key,
      (hit) => {
        remember(event, key, max);
        if (max - hit.count > addressMax - addressHit.count) return next();
        return report(event, hit, max) ? next() : refuse(event, max);
      },
      next,
    );
  };

  middleware.displayName = "rate-limit:window";
  const charge = async (event: RequestEvent | undefined, cost: number): Promise<void> => {
    const keys = event && counted.get(event);
    if (!keys || cost <= 0) return;
    for (const [key, limit] of keys) {
      let hit: RateLimitHit;
      try {
        hit = await store.hit(key, windowMs, cost);
      } catch {
        // The store's outage was (or will be) reported by the request's own count; follow its policy.
        if (options.onStoreError === "closed") throw new RpcError("SERVICE_UNAVAILABLE", { status: 503, message: "The rate limit cannot be checked right now; retry shortly" });
        return;
      }
      if (!report(event!, hit, limit)) {
        throw new RpcError("TOO_MANY_REQUESTS", { status: 429, message: `Too many requests: this call costs ${cost + 1} of the limit of ${limit} per ${windowMs} ms; retry in ${event!.responseHeaders.get("Retry-After")} s` });
      }
    }
  };
  return Object.assign(middleware, { charge });
}
