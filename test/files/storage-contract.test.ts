import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppStorage } from "../../kernel/index.js";
import { fromStore, memoryStorage, readStream, writeStream } from "../../kernel/storage/index.js";
import { startObjectStore } from "../support/object-store.js";

/** Deterministic pseudo-random bytes (every byte value appears), so a round trip is checked exactly. */
function bytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

interface Adapter {
  name: string;
  open(): Promise<{ storage: AppStorage; close(): Promise<void> } | { skipped: string }>;
}

/** `bytes` as a stream of `chunk`-sized pieces, erroring with `failure` after `failAfter` bytes when given. */
function streamOf(value: Uint8Array, chunk = 65_536, failAfter?: number, failure = new Error("the client went away")): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (failAfter !== undefined && offset >= failAfter) return controller.error(failure);
      if (offset >= value.byteLength) return controller.close();
      controller.enqueue(value.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array | null> {
  if (!stream) return null;
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Only the three base methods: what a third-party adapter may offer. */
function baseOnly(inner: AppStorage): AppStorage {
  return { get: (key) => inner.get(key), set: (key, value) => inner.set(key, value), delete: (key) => inner.delete(key) };
}

const adapters: Adapter[] = [
  { name: "memoryStorage", open: async () => ({ storage: memoryStorage(), close: async () => {} }) },
  {
    name: "fromStore (unstorage fs driver)",
    open: async () => {
      const base = await mkdtemp(join(tmpdir(), "trellis-fs-"));
      return { storage: fromStore(createStorage({ driver: fsDriver({ base }) })), close: () => rm(base, { recursive: true, force: true }) };
    },
  },
  { name: "fromObjectStore (S3 client against s3rver)", open: () => startObjectStore() },
  { name: "an adapter with only get, set and delete (readStream and writeStream fall back)", open: async () => ({ storage: baseOnly(memoryStorage()), close: async () => {} }) },
];

for (const adapter of adapters) {
  describe(`storage contract: ${adapter.name}`, () => {
    let storage: AppStorage | undefined;
    let close = async () => {};
    let skipped: string | undefined;
    beforeAll(async () => {
      const opened = await adapter.open();
      if ("skipped" in opened) {
        skipped = opened.skipped;
        console.log(`skipping ${adapter.name}: ${skipped}`);
        return;
      }
      storage = opened.storage;
      close = opened.close;
    });
    afterAll(() => close());

    it("sets, gets and deletes; a missing key reads as null and deleting it is no error", async (t) => {
      if (!storage) return t.skip();
      expect(await storage.get("never-written")).toBeNull();
      await storage.set("a", bytes(10));
      expect(await storage.get("a")).toEqual(bytes(10));
      await storage.set("a", bytes(5, 7));
      expect(await storage.get("a")).toEqual(bytes(5, 7));
      await storage.delete("a");
      expect(await storage.get("a")).toBeNull();
      await storage.delete("a");
      await storage.delete("never-written");
    });

    it("round-trips empty, small and 10 MB values byte for byte", async (t) => {
      if (!storage) return t.skip();
      for (const size of [0, 1, 255, 65_537, 10 * 1024 * 1024]) {
        const value = bytes(size, size + 3);
        await storage.set(`size-${size}`, value);
        const read = await storage.get(`size-${size}`);
        expect(read).toBeInstanceOf(Uint8Array);
        expect(read!.byteLength).toBe(size);
        expect(Buffer.from(read!).equals(Buffer.from(value))).toBe(true);
        await storage.delete(`size-${size}`);
      }
    }, 60_000);

    it("keeps keys with unusual characters distinct and intact", async (t) => {
      if (!storage) return t.skip();
      const keys = ["a/b", "a:b", "a\\b", "a%2Fb", "a?b", "a#b", "a b", "..", "../escape", "ünïcødé-ключ-鍵", "emoji-🙂", "UPPER", "upper", "dots.in.name", "trailing/"];
      for (const [index, key] of keys.entries()) await storage.set(key, bytes(16, index + 1));
      for (const [index, key] of keys.entries()) expect(await storage.get(key), key).toEqual(bytes(16, index + 1));
      for (const key of keys) await storage.delete(key);
      for (const key of keys) expect(await storage.get(key), key).toBeNull();
    });

    it("stores copies: changing a buffer after set or after get changes nothing stored", async (t) => {
      if (!storage) return t.skip();
      const value = bytes(32);
      await storage.set("copy", value);
      value[0] ^= 0xff;
      const read = (await storage.get("copy"))!;
      expect(read).toEqual(bytes(32));
      read[1] ^= 0xff;
      expect(await storage.get("copy")).toEqual(bytes(32));
      await storage.delete("copy");
    });

    it("streams in and out: every chunking, byte for byte, read whole or by range", async (t) => {
      if (!storage) return t.skip();
      for (const [size, chunk] of [
        [0, 1],
        [1, 1],
        [70_001, 4096],
        [10 * 1024 * 1024 + 3, 65_536],
      ] as const) {
        const value = bytes(size, size + 11);
        await writeStream(storage, `stream-${size}`, streamOf(value, chunk));
        const whole = await readAll(await readStream(storage, `stream-${size}`));
        expect(whole!.byteLength).toBe(size);
        expect(Buffer.from(whole!).equals(Buffer.from(value))).toBe(true);
        expect(Buffer.from((await storage.get(`stream-${size}`))!).equals(Buffer.from(value))).toBe(true);
        if (size > 2) {
          const middle = await readAll(await readStream(storage, `stream-${size}`, { start: 1, end: size - 2 }));
          expect(Buffer.from(middle!).equals(Buffer.from(value.subarray(1, size - 1)))).toBe(true);
          const past = await readAll(await readStream(storage, `stream-${size}`, { start: size - 1, end: size + 100 }));
          expect([...past!]).toEqual([value[size - 1]]);
        }
        await storage.delete(`stream-${size}`);
      }
    }, 60_000);

    it("reads bytes written with set as a stream, and a missing key as null", async (t) => {
      if (!storage) return t.skip();
      await storage.set("plain", bytes(3000, 5));
      expect(await readAll(await readStream(storage, "plain"))).toEqual(bytes(3000, 5));
      expect(await readStream(storage, "never-written")).toBeNull();
      expect(await readStream(storage, "never-written", { start: 0, end: 10 })).toBeNull();
      await storage.delete("plain");
    });

    it("a stream that fails leaves nothing under the key, and the failure is the stream's", async (t) => {
      if (!storage) return t.skip();
      const failure = new Error("the client went away");
      for (const failAfter of [0, 65_536, 9 * 1024 * 1024]) {
        const written = writeStream(storage, `failed-${failAfter}`, streamOf(bytes(10 * 1024 * 1024), 65_536, failAfter, failure));
        await expect(written).rejects.toBe(failure);
        expect(await storage.get(`failed-${failAfter}`)).toBeNull();
      }
    }, 60_000);

    it("stores copies of streamed chunks: changing a chunk after the write changes nothing stored", async (t) => {
      if (!storage) return t.skip();
      const chunk = bytes(64, 9);
      await writeStream(storage, "chunk-copy", new ReadableStream({ start: (c) => (c.enqueue(chunk), c.close()) }));
      chunk[0] ^= 0xff;
      const read = (await readAll(await readStream(storage, "chunk-copy")))!;
      expect(read).toEqual(bytes(64, 9));
      await storage.delete("chunk-copy");
    });

    it("handles concurrent writes to different keys", async (t) => {
      if (!storage) return t.skip();
      const keys = Array.from({ length: 40 }, (_, i) => `concurrent-${i}`);
      await Promise.all(keys.map((key, i) => storage!.set(key, bytes(1000 + i, i + 1))));
      const read = await Promise.all(keys.map((key) => storage!.get(key)));
      read.forEach((value, i) => expect(value).toEqual(bytes(1000 + i, i + 1)));
      await Promise.all(keys.map((key) => storage!.delete(key)));
    });
  });
}

describe("fromStore on the fs driver: streamed writes", () => {
  it("write to a temporary file renamed into place, so a failed stream leaves no file at all", async () => {
    const { readdir } = await import("node:fs/promises");
    const base = await mkdtemp(join(tmpdir(), "trellis-fs-"));
    try {
      const storage = fromStore(createStorage({ driver: fsDriver({ base }) }));
      await expect(writeStream(storage, "files/abc", streamOf(bytes(300_000), 65_536, 131_072))).rejects.toThrow("the client went away");
      expect(await readdir(base, { recursive: true })).toEqual([]);
      await writeStream(storage, "files/abc", streamOf(bytes(300_000)));
      expect(await readdir(base, { recursive: true })).toEqual(["files%2Fabc"]);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
