import type { Redis } from "ioredis";
import { windowHit } from "./scripts.js";

export interface RedisSecondaryStorageOptions {
  /**
   * Prefix of every key.
   * @default "trellis:auth:"
   */
  prefix?: string;
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
  const hit = windowHit(client);
  return {
    get: (key) => client.get(prefix + key),
    async set(key, value, ttl) {
      if (ttl && ttl > 0) await client.set(prefix + key, value, "EX", Math.ceil(ttl));
      else await client.set(prefix + key, value);
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
