import { randomBytes } from "node:crypto";
import { mkdir, open, rename, unlink, type FileHandle } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { ByteRange } from "./contract.js";
import { CHUNK_BYTES } from "./streams.js";

/** What unstorage's `getMount(key)` answers: the mount point and its driver. */
export interface MountInfo {
  base: string;
  driver: { name?: string; options?: { base?: string; readOnly?: boolean } };
}

/**
 * The file unstorage's `fs` or `fs-lite` driver keeps a key in (`join(base, key)` with `:` as `/`),
 * or undefined for any other driver. The key is already encoded to `[A-Za-z0-9_%-]`.
 */
export function fileMount(mount: MountInfo | undefined, encoded: string): string | undefined {
  const { name, options } = mount?.driver ?? {};
  if ((name !== "fs" && name !== "fs-lite") || !options?.base || options.readOnly) return undefined;
  const relative = encoded.slice(mount!.base.length);
  return join(resolve(options.base), relative.replace(/:/g, "/"));
}

/** How much one read of a stored file takes: a few large reads, each one round trip through libuv's pool. */
const READ_BYTES = 4 * 1024 * 1024;

/**
 * The file's bytes (or a range of them) read a chunk at a time as the reader pulls; null when
 * missing. The end is found by reading (a short read is the end of a regular file), not by a `stat`
 * first, and the file is closed beside the last chunk, not before it: no round trip but the reads.
 */
export async function readFileStream(path: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const end = range ? range.end + 1 : Infinity;
  let position = range?.start ?? 0;
  let closed = false;
  const close = () => (closed ? undefined : ((closed = true), handle.close().catch(() => {})));
  return new ReadableStream(
    {
      async pull(controller) {
        try {
          const want = Math.min(READ_BYTES, end - position);
          const buffer = want > 0 ? Buffer.allocUnsafeSlow(want) : undefined;
          const { bytesRead } = buffer ? await handle.read(buffer, 0, want, position) : { bytesRead: 0 };
          position += bytesRead;
          if (bytesRead > 0) controller.enqueue(bytesRead === want ? buffer! : buffer!.subarray(0, bytesRead));
          if (bytesRead < want || position >= end) {
            void close();
            controller.close();
          }
        } catch (error) {
          void close();
          controller.error(error);
        }
      },
      cancel: () => close(),
    },
    { highWaterMark: 0 },
  );
}

/**
 * Writes the stream to a temporary file beside the key's and renames it into place once the stream
 * ended: readers never see a partial file, and a failed stream leaves nothing behind. The temporary
 * name has a `.`, which no encoded key has, so it is never taken for a stored key.
 */
export async function writeFileStream(path: string, body: ReadableStream<Uint8Array>): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.part`;
  const handle = await openCreating(temporary);
  const reader = body.getReader();
  try {
    // Chunks gathered up to a batch and written with one `writev` (no copy): one system call per
    // batch, where one per network-sized chunk costs more than the copy into the page cache. The
    // next batch gathers while the previous one is written, so the writes overlap the producer.
    let batch: Uint8Array[] = [];
    let batched = 0;
    let writing: Promise<void> | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (!done) {
        batch.push(value);
        batched += value.byteLength;
      }
      if (batched > 0 && (done || batched >= CHUNK_BYTES)) {
        await writing;
        writing = writeAll(handle, batch, batched);
        // Awaited before the next batch or the end; a failure meanwhile is no unhandled rejection.
        writing.catch(() => {});
        batch = [];
        batched = 0;
      }
      if (done) break;
    }
    await writing;
    await handle.close();
    await rename(temporary, path);
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    await handle.close().catch(() => {});
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/** `writev` until every byte is written (a short write leaves the rest of the batch for the next call). */
async function writeAll(handle: FileHandle, chunks: Uint8Array[], length: number): Promise<void> {
  let pending = chunks;
  let left = length;
  while (left > 0) {
    let { bytesWritten } = await handle.writev(pending);
    left -= bytesWritten;
    if (left === 0) return;
    while (bytesWritten >= pending[0]!.byteLength) bytesWritten -= pending.shift()!.byteLength;
    pending = [pending[0]!.subarray(bytesWritten), ...pending.slice(1)];
  }
}

/** Opens a new file, making its directory only when it is missing (one system call fewer per write). */
async function openCreating(path: string): Promise<FileHandle> {
  try {
    return await open(path, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await mkdir(dirname(path), { recursive: true });
    return open(path, "wx");
  }
}
