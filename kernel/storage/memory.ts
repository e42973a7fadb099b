import type { AppStorage } from "../contracts/resources.js";

/**
 * Bytes in a `Map`, for tests and single-process development. Each value is copied on the way in
 * and out, so a caller that reuses its buffer never changes what was stored.
 */
export function memoryStorage(): AppStorage {
  const values = new Map<string, Uint8Array>();
  return {
    async get(key) {
      const value = values.get(key);
      return value ? value.slice() : null;
    },
    async set(key, bytes) {
      values.set(key, bytes.slice());
    },
    async delete(key) {
      values.delete(key);
    },
  };
}
