/** Counter stores: the contract the rate limit counts through, in memory (plugins/rate-limit) or in Redis (trellis/redis). */
/** One request counted: how many so far in the key's current window, and when that window ends. */
export interface RateLimitHit {
  count: number;
  /** When the window ends, in epoch milliseconds. */
  resetAt: number;
}

/**
 * Counter store of the rate limit. `hit` counts `cost` (1 when absent: one request) for `key` in a
 * fixed window of `windowMs` that starts at the key's first hit; it must be atomic when shared
 * between replicas (`trellis/redis` gives one). A call that carries several (a batch of N items)
 * costs more than one.
 */
export interface RateLimitStore {
  hit(key: string, windowMs: number, cost?: number): RateLimitHit | Promise<RateLimitHit>;
  /** Releases timers or connections the store holds. */
  close?(): void | Promise<void>;
}

/**
 * The `rate-limit` service (provided by the rate-limit plugin): charge a request for more than one
 * call, e.g. a batch of N items. Declared here so any plugin can use it without importing the plugin.
 */
export interface RateLimitCharge {
  charge(event: import("../event.js").RequestEvent | undefined, cost: number): Promise<void>;
}
