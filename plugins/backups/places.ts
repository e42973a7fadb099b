import { createReadStream, createWriteStream } from "node:fs";
import { chmod, mkdir, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { readStream, writeStream, type AppStorage } from "../../kernel/index.js";

/** One backup as it is listed. */
export interface BackupInfo {
  /** `backup-<UTC time>-<random>.tar.gz` (embedded) or `.dump` (pg_dump). */
  name: string;
  /** Bytes. */
  size: number;
  /** The time in its name. */
  createdAt: Date;
}

/** Where backups are kept: a directory, or the app's storage adapter. */
export interface BackupPlace {
  /** For the dashboard: the directory, or `storage (backups/)`. */
  readonly describe: string;
  /** Streams the bytes in; resolves with how many were written. */
  write(name: string, bytes: ReadableStream<Uint8Array>): Promise<number>;
  /** Newest first, by the time in their names. */
  list(): Promise<BackupInfo[]>;
  read(name: string): Promise<ReadableStream<Uint8Array> | null>;
  remove(name: string): Promise<void>;
}

/**
 * Only names this plugin writes, so a listing, a retention pass, a read or a removal never touches
 * anything else: the UTC time it was taken, then a random part (older versions wrote none) so two
 * replicas taking one in the same millisecond do not collide.
 */
export const BACKUP_NAME = /^backup-(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z(?:-[0-9a-f]{8})?\.(tar\.gz|dump)$/;

/** A new backup's name. */
export function backupName(at: Date, extension: string): string {
  const random = Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, "0");
  return `backup-${at.toISOString().replace(/[:.]/g, "-")}-${random}.${extension}`;
}

/** The time in a backup's name, or null when it is not one. */
export function backupTime(name: string): Date | null {
  const match = BACKUP_NAME.exec(name);
  if (!match) return null;
  const [year, month, day, hour, minute, second, ms] = match.slice(1, 8).map(Number) as number[];
  return new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!, ms!));
}

const newestFirst = (a: BackupInfo, b: BackupInfo) => b.createdAt.getTime() - a.createdAt.getTime() || b.name.localeCompare(a.name);

/** Counts the bytes passing through into `count.bytes`. */
function counted(body: ReadableStream<Uint8Array>): { stream: ReadableStream<Uint8Array>; count: { bytes: number } } {
  const count = { bytes: 0 };
  const stream = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        count.bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  return { stream, count };
}

const missing = <T>(error: NodeJS.ErrnoException, value: T) => (error.code === "ENOENT" ? value : Promise.reject(error));

export function directoryPlace(dir: string): BackupPlace {
  return {
    describe: dir,
    async write(name, bytes) {
      await mkdir(dir, { recursive: true });
      // Written beside, then renamed: a listing never shows half a backup.
      const partial = join(dir, `.${name}.partial`);
      try {
        // Owner-only: a backup holds password hashes and session tokens. The chmod covers a
        // partial file left by a crash, which the open's mode does not change.
        await pipeline(Readable.fromWeb(bytes as import("node:stream/web").ReadableStream<Uint8Array>), createWriteStream(partial, { mode: 0o600 }));
        await chmod(partial, 0o600);
      } catch (error) {
        await unlink(partial).catch(() => undefined);
        throw error;
      }
      await rename(partial, join(dir, name));
      return (await stat(join(dir, name))).size;
    },
    async list() {
      const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => missing(error, [] as string[]));
      const found = await Promise.all(
        names.map(async (name): Promise<BackupInfo | null> => {
          const createdAt = backupTime(name);
          if (!createdAt) return null;
          const about = await stat(join(dir, name)).catch((error: NodeJS.ErrnoException) => missing(error, null));
          return about && { name, size: about.size, createdAt };
        }),
      );
      return found.filter((info): info is BackupInfo => info !== null).sort(newestFirst);
    },
    async read(name) {
      if (!backupTime(name)) return null;
      const path = join(dir, name);
      const found = await stat(path).catch((error: NodeJS.ErrnoException) => missing(error, null));
      return found ? (Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>) : null;
    },
    async remove(name) {
      if (!backupTime(name)) throw new Error(`not a backup name: ${JSON.stringify(name)}`);
      await unlink(join(dir, name)).catch((error: NodeJS.ErrnoException) => missing(error, undefined));
    },
  };
}

/**
 * Under `backups/` in the app's storage adapter. The adapter contract has no listing, so the list
 * is kept beside the backups as `backups/index.json`, written after each backup's bytes. Several
 * replicas may write it: each change re-reads it just before writing and changes only its own entry.
 */
export function storagePlace(storage: AppStorage): BackupPlace {
  const INDEX = "backups/index.json";
  const index = async (): Promise<BackupInfo[]> => {
    const bytes = await storage.get(INDEX);
    if (!bytes) return [];
    const entries = JSON.parse(new TextDecoder().decode(bytes)) as Array<{ name: string; size: number }>;
    return entries.flatMap(({ name, size }) => {
      const createdAt = backupTime(name);
      return createdAt ? [{ name, size, createdAt }] : [];
    }).sort(newestFirst);
  };
  const save = (entries: BackupInfo[]) => storage.set(INDEX, new TextEncoder().encode(JSON.stringify(entries)));
  // One change at a time in this process; across replicas, a change another one wrote over is
  // seen on the read that follows the write, and made again.
  let queue: Promise<unknown> = Promise.resolve();
  const update = (change: (entries: BackupInfo[]) => BackupInfo[], done: (entries: BackupInfo[]) => boolean) => {
    const run = queue.then(async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        await save(change(await index()));
        if (done(await index())) return;
      }
    });
    queue = run.catch(() => undefined);
    return run;
  };
  return {
    describe: "storage (backups/)",
    async write(name, bytes) {
      const { stream, count } = counted(bytes);
      await writeStream(storage, `backups/${name}`, stream);
      const info = { name, size: count.bytes, createdAt: backupTime(name)! };
      await update((entries) => [info, ...entries.filter((entry) => entry.name !== name)], (entries) => entries.some((entry) => entry.name === name));
      return count.bytes;
    },
    list: index,
    read: (name) => (backupTime(name) ? readStream(storage, `backups/${name}`) : Promise.resolve(null)),
    async remove(name) {
      if (!backupTime(name)) throw new Error(`not a backup name: ${JSON.stringify(name)}`);
      await storage.delete(`backups/${name}`);
      await update((entries) => entries.filter((entry) => entry.name !== name), (entries) => !entries.some((entry) => entry.name === name));
    },
  };
}
