import type { AppKV } from "../contracts/resources.js";

interface Entry {
  value: unknown;
  /** Epoch ms after which the entry is gone; undefined = no ttl. */
  expiresAt: number | undefined;
}

/**
 * An in-process `AppKV` honouring `setItem(key, value, { ttl })` (seconds). Expired entries are
 * dropped when read or listed, so no timer keeps the process alive.
 */
export function memoryKV(): AppKV {
  const entries = new Map<string, Entry>();
  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const set = async (key: string, value: unknown, opts?: { ttl?: number }) => {
    const ttl = opts?.ttl;
    entries.set(key, { value, expiresAt: ttl !== undefined && ttl > 0 ? Date.now() + ttl * 1000 : undefined });
  };
  const keys = (base = "") => [...entries.keys()].filter((key) => key.startsWith(base) && live(key));
  return {
    hasItem: async (key) => live(key) !== undefined,
    getItem: async <T>(key: string) => (live(key)?.value ?? null) as T | null,
    getItemRaw: async <T>(key: string) => (live(key)?.value ?? null) as T | null,
    setItem: set,
    setItemRaw: set,
    removeItem: async (key) => {
      entries.delete(key);
    },
    getKeys: async (base) => keys(base),
    clear: async (base) => {
      for (const key of keys(base)) entries.delete(key);
    },
  };
}
