import type { StandardRPCCustomJsonSerializer } from "@orpc/client/standard";

/**
 * The RPC wire's type id for `Uint8Array` (bytes columns). Fixed and documented: the server handler
 * and the `trellis/client` link must agree on it. oRPC's own types use small ids; 40 stays clear.
 */
export const BYTES_TYPE_ID = 40;

export const bytesSerializer: StandardRPCCustomJsonSerializer = {
  type: BYTES_TYPE_ID,
  condition: (data) => data instanceof Uint8Array,
  serialize: (data: Uint8Array) => toBase64(data),
  deserialize: (serialized) => {
    if (typeof serialized !== "string") throw new TypeError("bytes must be carried as a base64 string");
    return fromBase64(serialized);
  },
};

// The client runs in browsers too, where there is no Buffer.
export function toBase64(bytes: Uint8Array): string {
  if (typeof Buffer !== "undefined") return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  if (typeof Buffer !== "undefined") return new Uint8Array(Buffer.from(text, "base64"));
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

export const customJsonSerializers = [bytesSerializer] as const;
