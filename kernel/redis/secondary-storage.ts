import type { Redis } from "ioredis";
import { within } from "../runtime/within.js";
import { windowHit } from "./scripts.js";

export interface RedisSecondaryStorageOptions {
  /**
   * Prefix of every key.
   * @default "trellis:auth:"
   */
  prefix?: string;
  /**
   * How long a read or write may wait for Redis. Past it, or when Redis fails, a read is a miss
   * (with `session.storeSessionInDatabase: true` better-auth then reads the session from the
   * database) and a write is skipped (the database copy holds); a delete still fails, so a
   * sign-out never leaves a session alive in Redis.
   * @default 500
   */
  timeoutMs?: number;
}

/** The shape of better-auth's `secondaryStorage` (1.7), declared here so the entry needs no import of it. */
export interface AuthSecondaryStorage {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttl?: number): Promise<void>;
  delete(key: string): Promise<void>;
  getAndDelete(key: string): Promise<string | null>;
  increment(key: string, ttl: number): Promise<number>;
}

/**
 * better-auth's `secondaryStorage` on Redis (`.auth({ secondaryStorage })`): the session cache and
 * the library's own rate limit (its sign-in limiter included) then hold across replicas. `ttl` is
 * in seconds; `increment` creates the counter with its expiry and never extends it, atomically.
 */
export function redisSecondaryStorage(client: Redis, options: RedisSecondaryStorageOptions = {}): AuthSecondaryStorage {
  const prefix = options.prefix ?? "trellis:auth:";
  const timeoutMs = options.timeoutMs ?? 500;
  const hit = windowHit(client);
  const bounded = <T>(work: Promise<T>) => within(work, timeoutMs, `Redis did not answer within ${timeoutMs} ms`);
  return {
    get: (key) => bounded(client.get(prefix + key)).catch(() => null),
    async set(key, value, ttl) {
      const write = ttl && ttl > 0 ? client.set(prefix + key, value, "EX", Math.ceil(ttl)) : client.set(prefix + key, value);
      await bounded(write).catch(() => undefined);
    },
    async delete(key) {
      await client.del(prefix + key);
    },
    getAndDelete: (key) => client.getdel(prefix + key),
    async increment(key, ttl) {
      const [count] = await hit(prefix + key, Math.max(1, Math.ceil(ttl * 1000)));
      return Number(count);
    },
  };
}
