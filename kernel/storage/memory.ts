import type { AppStorage } from "./contract.js";
import { CHUNK_BYTES, gather } from "./streams.js";

/**
 * Bytes in a `Map`, for tests and single-process development. Each value is copied on the way in
 * and out, so a caller that reuses its buffer never changes what was stored; a streamed write is
 * stored only once its stream has ended.
 */
export function memoryStorage(): AppStorage {
  const values = new Map<string, Uint8Array>();
  return {
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
      let offset = range ? Math.min(range.start, end) : 0;
      // Copied a piece at a time as the reader pulls: never a second whole copy in memory.
      return new ReadableStream({
        pull(controller) {
          if (offset >= end) return controller.close();
          const next = Math.min(offset + CHUNK_BYTES, end);
          controller.enqueue(value.slice(offset, next));
          offset = next;
        },
      });
    },
    async setStream(key, body) {
      values.set(key, await gather(body, true));
    },
  };
}
