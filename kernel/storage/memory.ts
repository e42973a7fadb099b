import type { AppStorage } from "./contract.js";
import { chunksOf, gather } from "./streams.js";

/** Marks the stores `memoryStorage()` makes; read through wrappers (`observedStorage` passes symbols through). */
const IN_MEMORY = Symbol.for("trellis.storage.in-memory");

/**
 * Whether the store keeps its bytes in this process only (`memoryStorage()`): gone at every
 * restart while the file rows stay. The start banner and `trellis doctor` warn when one serves.
 */
export function isMemoryStorage(storage: unknown): boolean {
  return typeof storage === "object" && storage !== null && (storage as Record<symbol, unknown>)[IN_MEMORY] === true;
}

/**
 * Bytes in a `Map`, for tests and single-process development. Each value is copied on the way in
 * and out of `set` and `get`, so a caller that reuses its buffer never changes what was stored; a
 * streamed write is stored only once its stream has ended; a streamed read is one read-only view.
 */
export function memoryStorage(): AppStorage {
  const values = new Map<string, Uint8Array>();
  const storage: AppStorage & { [IN_MEMORY]: true } = {
    [IN_MEMORY]: true,
    async get(key) {
      const value = values.get(key);
      return value ? value.slice() : null;
    },
    async set(key, bytes) {
      // `new Uint8Array(bytes)` copies even a Buffer, whose `slice()` is a view.
      values.set(key, new Uint8Array(bytes));
    },
    async delete(key) {
      values.delete(key);
    },
    async getStream(key, range) {
      const value = values.get(key);
      if (!value) return null;
      const end = range ? Math.min(range.end + 1, value.byteLength) : value.byteLength;
      // The stored bytes as one chunk, a view (a stored value is never changed in place, only
      // replaced): a response writes them out without a copy. Its readers must not write into it.
      return chunksOf(value.subarray(range ? Math.min(range.start, end) : 0, end));
    },
    async setStream(key, body) {
      values.set(key, await gather(body, true));
    },
  };
  return storage;
}
