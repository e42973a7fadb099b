/** A byte range of a stored object, both ends included (as HTTP's `Range: bytes=start-end`). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Object store for file bytes. `get`, `set` and `delete` are the contract every adapter meets;
 * `getStream` and `setStream` let an adapter move bytes without holding a whole file in memory.
 * Callers go through `readStream` and `writeStream` (`trellis/kernel`), which fall back to `get`
 * and `set` for an adapter without them.
 */
export interface AppStorage {
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * The stored bytes (or the `range` of them) as a stream, or null when the key is missing. A
   * range past the end is cut at the end.
   */
  getStream?(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  /**
   * Stores the stream's bytes under `key`, read to its end. When the stream errors (or the store
   * fails) the promise rejects with that error and nothing new is left under `key`.
   */
  setStream?(key: string, body: ReadableStream<Uint8Array>): Promise<void>;
}
