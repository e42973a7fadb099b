import type { AppStorage } from "../contracts/resources.js";

/**
 * The part of unstorage's `Storage` the adapter uses: raw (binary) reads and writes. A
 * `createStorage({ driver })` result is assignable as is.
 */
export interface RawStore {
  getItemRaw(key: string): Promise<unknown>;
  setItemRaw(key: string, value: any): Promise<void>;
  removeItem(key: string): Promise<void>;
}

/**
 * `AppStorage` over an unstorage `Storage` (any driver: fs, S3, Redis, ...). unstorage treats `/`,
 * `\` and `:` alike, cuts a key at `?`, and its fs driver refuses `..`; so every byte of a key
 * outside `[A-Za-z0-9_-]` is written as `%XX`, and distinct keys stay distinct on every driver.
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
