import type { Redis } from "ioredis";
import type { RateLimitStore } from "../kv/counter-store.js";
import { within } from "../runtime/within.js";
import { windowHit } from "./scripts.js";

export interface RedisRateLimitStoreOptions {
  /**
   * Prefix of every counter key.
   * @default "trellis:rate-limit:"
   */
  prefix?: string;
  /**
   * How long a hit may wait for Redis before it counts as a store failure (then the rate limit's
   * `onStoreError` policy applies). While Redis is away the client reconnects on its own.
   * @default 500
   */
  timeoutMs?: number;
}

/**
 * Rate-limit counters in Redis, shared by every replica: one atomic script per request (increment,
 * expiry on the window's first hit, remaining time), so N replicas admit exactly `max` in total.
 * The client stays yours: close it at shutdown.
 */
export function redisRateLimitStore(client: Redis, options: RedisRateLimitStoreOptions = {}): RateLimitStore {
  const prefix = options.prefix ?? "trellis:rate-limit:";
  const timeoutMs = options.timeoutMs ?? 500;
  const hit = windowHit(client);
  return {
    async hit(key, windowMs, cost = 1) {
      const [count, ttl] = await within(hit(prefix + key, windowMs, cost), timeoutMs, `Redis did not answer a rate-limit hit within ${timeoutMs} ms`);
      return { count: Number(count), resetAt: Date.now() + Number(ttl) };
    },
  };
}
