import type { AppStorage } from "./contract.js";
import { fileMount, readFileStream, writeFileStream, type MountInfo } from "./fs-files.js";
import { chunksOf, gather } from "./streams.js";

/**
 * The part of unstorage's `Storage` the adapter uses: raw (binary) reads and writes, and the mount
 * of a key (so bytes on an fs driver are streamed from and to their file). A
 * `createStorage({ driver })` result is assignable as is.
 */
export interface RawStore {
  getItemRaw(key: string): Promise<unknown>;
  setItemRaw(key: string, value: any): Promise<void>;
  removeItem(key: string): Promise<void>;
  getMount?(key: string): MountInfo;
}

/**
 * `AppStorage` over an unstorage `Storage` (any driver: fs, S3, Redis, ...). unstorage treats `/`,
 * `\` and `:` alike, cuts a key at `?`, and its fs driver refuses `..`; so every byte of a key
 * outside `[A-Za-z0-9_-]` is written as `%XX`, and distinct keys stay distinct on every driver.
 * On the `fs` and `fs-lite` drivers, streamed reads and writes go to the driver's own file for the
 * key; on other drivers they hold the value in memory, as unstorage itself does.
 */
export function fromStore(store: RawStore): AppStorage {
  return {
    async get(key) {
      return toBytes(await store.getItemRaw(encodeKey(key)));
    },
    async set(key, bytes) {
      await store.setItemRaw(encodeKey(key), bytes);
    },
    async delete(key) {
      await store.removeItem(encodeKey(key));
    },
    async getStream(key, range) {
      const encoded = encodeKey(key);
      const file = fileMount(store.getMount?.(encoded), encoded);
      if (file) return readFileStream(file, range);
      const bytes = toBytes(await store.getItemRaw(encoded));
      return bytes && chunksOf(range ? bytes.subarray(range.start, range.end + 1) : bytes);
    },
    async setStream(key, body) {
      const encoded = encodeKey(key);
      const file = fileMount(store.getMount?.(encoded), encoded);
      if (file) return writeFileStream(file, body);
      await store.setItemRaw(encoded, await gather(body));
    },
  };
}

const SAFE = /^[A-Za-z0-9_-]$/;
const encoder = new TextEncoder();

function encodeKey(key: string): string {
  let out = "";
  for (const char of key) {
    if (SAFE.test(char)) out += char;
    else for (const byte of encoder.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Drivers answer a Buffer, a Uint8Array, an ArrayBuffer, or (for text they wrote) a string. */
function toBytes(value: unknown): Uint8Array | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof value === "string") return encoder.encode(value);
  throw new TypeError(`The store returned ${typeof value} for a raw read; expected bytes`);
}
