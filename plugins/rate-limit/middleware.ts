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
 * The fixed-window limiter. Every request is counted against its key (a custom `key`, else the
 * signed-in user, else the client address), `max` per window per key: keys do not share a budget,
 * whatever address they come from. Failed credentials are counted apart, per client address
 * (`maxPerAddress`): a request carrying a credential first looks at that count, and once the address
 * has spent it nothing is looked up at all (429); a credential that resolves to no user adds one to
 * it. So guessing keys, tokens or cookies is throttled without a valid caller sharing anyone's budget.
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

  /** Counts `cost` hits on `key` (0: looks), then hands the result on; a failing store follows `onStoreError`. */
  const count = (
    event: RequestEvent,
    key: string,
    cost: number,
    then: (hit: RateLimitHit) => Promise<Response>,
    next: () => Promise<Response>,
  ): Promise<Response> => {
    let hit: RateLimitHit | Promise<RateLimitHit>;
    try {
      hit = store.hit(key, windowMs, cost);
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
      if (skipped instanceof Promise) return skipped.then((yes) => (yes ? next() : byCaller(event, next)));
      if (skipped) return next();
    }
    return byCaller(event, next);
  };

  const addressOf = (event: RequestEvent) => `ip:${callerBucket(event) ?? "unknown"}`;
  const keyOf = (event: RequestEvent, user: SessionUser | null): string | Promise<string> =>
    options.key ? options.key(event, user) : user ? (options.by === "organization" && organizationOf(event)) || `user:${user.id}` : addressOf(event);
  /** `org:<id>` of the session's active organization, read from the lookup already made. */
  const organizationOf = (event: RequestEvent): string | undefined => {
    const state = event.sessionState;
    const active = state && !(state instanceof Promise) ? state.session?.activeOrganizationId : undefined;
    return typeof active === "string" && active ? `org:${active}` : undefined;
  };

  const byCaller = (event: RequestEvent, next: () => Promise<Response>): Promise<Response> => {
    // Anonymous callers (no credential header) need no session lookup at all.
    if (!carriesCredential(event.headers)) return byKey(event, keyOf(event, null), next);
    const failed = `failed:${addressOf(event)}`;
    return count(
      event,
      failed,
      0,
      (seen) => {
        // The address spent its failures: refused before the credential is read, whoever it names.
        if (!report(event, { count: seen.count + 1, resetAt: seen.resetAt }, addressMax)) return refuse(event, addressMax);
        /** One more failure for the address; `then` runs within its budget. */
        const fail = (then: (hit: RateLimitHit) => Promise<Response>) =>
          count(
            event,
            failed,
            1,
            (hit) => {
              remember(event, failed, addressMax);
              return report(event, hit, addressMax) ? then(hit) : refuse(event, addressMax);
            },
            next,
          );
        return event.session().then(
          ({ user }) => (user ? byKey(event, keyOf(event, user), next) : fail((hit) => byKey(event, keyOf(event, null), next, [hit, addressMax]))),
          // A credential the auth library refuses itself (an unknown API key: its 403) fails too.
          (error: unknown) => fail(() => Promise.reject(error)),
        );
      },
      next,
    );
  };

  /** The caller's own budget; with the address's failures counted too, the tighter one is reported. */
  const byKey = (event: RequestEvent, key: string | Promise<string>, next: () => Promise<Response>, failures?: [RateLimitHit, number]): Promise<Response> => {
    if (key instanceof Promise) return key.then((resolved) => byKey(event, resolved, next, failures));
    return count(
      event,
      key,
      1,
      (hit) => {
        remember(event, key, max);
        if (failures && max - hit.count > failures[1] - failures[0].count) return next();
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
