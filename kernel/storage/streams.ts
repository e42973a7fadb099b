import type { AppStorage, ByteRange } from "./contract.js";

export type { ByteRange } from "./contract.js";

/**
 * Streamed reads and writes over any `AppStorage`: the adapter's own `getStream` and `setStream`
 * when it has them; otherwise `get` (cut to the range) and `set` (the stream gathered first), so a
 * third-party adapter with only the three base methods keeps working, holding one file in memory.
 */
export async function readStream(storage: AppStorage, key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
  if (storage.getStream) return storage.getStream(key, range);
  const bytes = await storage.get(key);
  if (!bytes) return null;
  return chunksOf(range ? bytes.subarray(range.start, range.end + 1) : bytes);
}

export async function writeStream(storage: AppStorage, key: string, body: ReadableStream<Uint8Array>): Promise<void> {
  if (storage.setStream) return storage.setStream(key, body);
  await storage.set(key, await gather(body));
}

/**
 * Every chunk of a stream in one buffer: one copy, or none for a single chunk unless `fresh` asks
 * for a buffer the stream's producer does not share.
 */
export async function gather(body: ReadableStream<Uint8Array>, fresh = false): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.byteLength;
  }
  if (chunks.length === 1) return fresh ? new Uint8Array(chunks[0]!) : chunks[0]!;
  const out = unfilled(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * A new buffer of `length` bytes, left unzeroed where the runtime allows it (Node's `Buffer`), for a
 * caller that writes every byte: zeroing 10 MB first costs about half as much again as the copy.
 * A plain `Uint8Array` over its own memory, never a pooled `Buffer` (whose `slice()` is a view).
 */
function unfilled(length: number): Uint8Array {
  const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): Uint8Array } }).Buffer;
  return NodeBuffer ? new Uint8Array(NodeBuffer.allocUnsafeSlow(length).buffer, 0, length) : new Uint8Array(length);
}

/** How much of a buffer one chunk of a stream carries when it must be copied out piece by piece. */
export const CHUNK_BYTES = 1024 * 1024;

/**
 * Bytes already in memory as a stream of one chunk: the Fetch implementation hands a stream's
 * chunks on as they are, where a `Uint8Array` body would be copied again.
 */
export function chunksOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}
