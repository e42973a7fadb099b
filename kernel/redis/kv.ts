import type { Redis } from "ioredis";
import type { AppKV } from "../kv/index.js";

export interface RedisKVOptions {
  /**
   * Prefix of every key.
   * @default "trellis:kv:"
   */
  prefix?: string;
}

/**
 * `AppKV` on Redis: values are stored as JSON (strings as they are), `setItem(key, value, { ttl })`
 * expires the key after `ttl` seconds, and every replica reads what another wrote.
 */
export function redisKV(client: Redis, options: RedisKVOptions = {}): AppKV {
  const prefix = options.prefix ?? "trellis:kv:";
  const keysUnder = async (base = ""): Promise<string[]> => {
    const found: string[] = [];
    const pattern = `${escapeGlob(prefix + base)}*`;
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", pattern, "COUNT", 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0");
    return found;
  };
  const set = async (key: string, value: string | Buffer, ttl: unknown) => {
    if (ttl === undefined || ttl === null) await client.set(prefix + key, value);
    else if (typeof ttl === "number" && ttl > 0) await client.set(prefix + key, value, "PX", Math.ceil(ttl * 1000));
    else throw new RangeError(`ttl must be a number of seconds above 0, got ${String(ttl)}`);
  };
  return {
    async hasItem(key) {
      return (await client.exists(prefix + key)) === 1;
    },
    async getItem<T>(key: string): Promise<T | null> {
      const text = await client.get(prefix + key);
      return text === null ? null : (decode(text) as T);
    },
    async setItem(key, value, opts) {
      if (value === undefined) return this.removeItem(key);
      await set(key, typeof value === "string" ? value : JSON.stringify(value), opts?.ttl);
    },
    async removeItem(key) {
      await client.del(prefix + key);
    },
    async getKeys(base) {
      return (await keysUnder(base)).map((key) => key.slice(prefix.length));
    },
    async clear(base) {
      const keys = await keysUnder(base);
      for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
    },
    async getItemRaw<T>(key: string): Promise<T | null> {
      return (await client.getBuffer(prefix + key)) as T | null;
    },
    async setItemRaw(key, value, opts) {
      await set(key, value instanceof Uint8Array ? Buffer.from(value) : value, opts?.ttl);
    },
  };
}

/** JSON when it parses as JSON, else the string itself (what `setItem` stored for a string). */
function decode(text: string): unknown {
  const first = text.charCodeAt(0);
  // Only text that JSON.stringify could have produced for a non-string is parsed.
  if (text === "true" || text === "false" || text === "null" || first === 123 || first === 91 || (first >= 48 && first <= 57) || first === 45) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}
