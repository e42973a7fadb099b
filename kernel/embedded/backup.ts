import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { TrellisError } from "../errors.js";
import { lockDataDir } from "./lock.js";

/** What a backup needs of the running instance: the app's own PGlite, never a second one. */
export interface Dumpable {
  exec(statement: string): Promise<unknown>;
  dumpDataDir(compression?: "auto" | "gzip" | "none"): Promise<Blob | File>;
}

/**
 * A consistent, gzip-compressed tarball of the running database's data directory. A `checkpoint`
 * first writes every committed change into the data files; the tarball is then read under PGlite's
 * query lock, between two statements, so it holds every transaction committed before it began.
 * A transaction still open at that moment is in the WAL uncommitted and is rolled back when the
 * backup is restored, exactly as after a crash. It is compressed after the lock is released, by
 * zlib on libuv's thread pool: statements wait for the read only (2 s rather than 7 s for a 60 MB
 * directory, docs/operations.md). Runs where the instance is: on the request thread, or on the
 * database thread for a `dump` message (worker/thread.ts).
 */
export async function backupEmbedded(client: Dumpable): Promise<Uint8Array> {
  await client.exec("checkpoint");
  const tarball = new Uint8Array(await (await client.dumpDataDir("none")).arrayBuffer());
  const compressed = await gzipAsync(tarball);
  // A buffer of its own (not a view into Node's pool), so the database thread can transfer it.
  return compressed.byteOffset === 0 && compressed.byteLength === compressed.buffer.byteLength ? new Uint8Array(compressed.buffer, 0, compressed.byteLength) : new Uint8Array(compressed);
}

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export interface RestoreOptions {
  /** Replace what the directory holds (it must not be open in any process). @default false */
  force?: boolean;
}

/**
 * Restores a backup from `backupEmbedded` (or `trellis db backup`) into `dataDir`, refusing a
 * directory that already holds anything unless `force`. The directory is locked meanwhile, so a
 * running app cannot have it open. The backup is opened in a directory beside `dataDir` and moved
 * into place only once it reads as a database: a backup that cannot be read (truncated, not a
 * backup) fails with `DB_RESTORE_UNREADABLE` and leaves `dataDir` as it was, forced or not.
 */
export async function restoreEmbedded(backup: Uint8Array, dataDir: string, options: RestoreOptions = {}): Promise<void> {
  const target = resolve(dataDir);
  if (existsSync(target) && readdirSync(target).length > 0) {
    if (!options.force) {
      throw new TrellisError("DB_RESTORE_NOT_EMPTY", `Cannot restore into ${target}: it is not empty. Restore into an empty directory, or pass --force to replace what it holds.`);
    }
  }
  // The lock file sits beside the directory: its parent exists first, as `embedded()` creates it.
  mkdirSync(dirname(target), { recursive: true });
  const lock = lockDataDir(target);
  const suffix = randomBytes(4).toString("hex");
  const staging = `${target}.restoring-${suffix}`;
  try {
    const tarball = await unpacked(backup);
    // PGlite retries a tarball whose headers do not read as tar as gzip, through a stream whose
    // failure nothing awaits (an unhandled rejection after the restore has failed): refused here.
    const broken = tarProblem(tarball);
    if (broken) throw unreadable(new Error(broken));
    mkdirSync(staging, { recursive: true });
    try {
      const { PGlite } = await import("@electric-sql/pglite");
      const instance = await PGlite.create(staging, { loadDataDir: new Blob([tarball as Uint8Array<ArrayBuffer>], { type: "application/x-tar" }) });
      // A readable database, or the error now rather than at the app's next start.
      await instance.query("select 1");
      await instance.close();
    } catch (error) {
      throw unreadable(error);
    }
    if (existsSync(target)) {
      const replaced = `${target}.replaced-${suffix}`;
      renameSync(target, replaced);
      renameSync(staging, target);
      rmSync(replaced, { recursive: true, force: true });
    } else renameSync(staging, target);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    lock.release();
  }
}

/** The backup's tarball: gunzipped here (a truncated one fails with a clear error), or as is when not compressed. */
async function unpacked(backup: Uint8Array): Promise<Uint8Array> {
  if (backup[0] !== 0x1f || backup[1] !== 0x8b) return backup;
  try {
    return await gunzipAsync(backup);
  } catch (error) {
    throw unreadable(error);
  }
}

const BLOCK = 512;

/**
 * Why `tarball` is not a tar archive PGlite can read, or undefined when it is: every header, read as
 * PGlite's reader walks them (up to two zero blocks, or the end), holds the ustar magic and its own
 * checksum.
 */
function tarProblem(tarball: Uint8Array): string | undefined {
  if (tarball.byteLength < BLOCK) return "not a tar archive: shorter than one header";
  for (let offset = 0; tarball.byteLength - offset >= BLOCK; ) {
    const header = tarball.subarray(offset, offset + BLOCK);
    if (ascii(header, 257, 5) !== "ustar") return `not a tar archive: no ustar header at byte ${offset}`;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    if (parseInt(ascii(header, 148, 8), 8) !== sum) return `not a tar archive: the header at byte ${offset} fails its checksum`;
    offset += BLOCK + Math.ceil((parseInt(ascii(header, 124, 12), 8) || 0) / BLOCK) * BLOCK;
    if (tarball.subarray(offset, offset + 2 * BLOCK).every((byte) => byte === 0)) return undefined;
  }
  return undefined;
}

function ascii(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length)).replace(/[\0 ]+$/, "").trim();
}

function unreadable(cause: unknown): TrellisError {
  const message = `The backup cannot be restored: it is not a readable backup of an embedded database (${(cause as Error)?.message ?? String(cause)}); the data directory was left as it was.`;
  return new TrellisError("DB_RESTORE_UNREADABLE", message, { cause });
}
