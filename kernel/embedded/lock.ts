import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { TrellisError } from "../errors.js";

/**
 * One process at a time on a PGlite data directory: two would corrupt it. The lock is a
 * file beside the directory (`<dataDir>.lock`, never inside it, where PGlite owns every
 * file) holding `{ pid, hostname, startedAt }`, created exclusively. A lock left by a dead
 * process (a crash, a kill) is taken over.
 */

export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/** Directories this process holds: a second open here must fail like one from elsewhere. */
const held = new Map<string, string>();

// Synchronous, because nothing asynchronous runs at exit; signals and crashes leave the
// file behind, and the dead-pid takeover handles it.
process.on("exit", () => {
  for (const lockPath of held.values()) removeIfOurs(lockPath);
});

/** Takes the lock on `dataDir` (an absolute path) or throws an Error naming the holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  const lockPath = `${dataDir}.lock`;
  if (held.has(dataDir)) {
    throw new Error(
      `The embedded database directory ${dataDir} is already open in this process (pid ${process.pid}); close it first.`,
    );
  }
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; !tryCreate(lockPath, holder); attempt++) {
    const current = readHolder(lockPath);
    if (current && isAlive(current)) {
      throw new TrellisError(
        "EMBEDDED_DIR_LOCKED",
        `The embedded database directory ${dataDir} is locked by process ${current.pid} on ${current.hostname} ` +
          `(since ${current.startedAt}); lock file ${lockPath}. Stop that process, or use another dataDir.`,
      );
    }
    if (attempt === 3) throw new Error(`Could not take over the stale lock file ${lockPath}.`);
    // Stale: remove it and race for it again with `wx`, so two takers cannot both win.
    unlinkQuietly(lockPath);
  }
  held.set(dataDir, lockPath);
  return {
    path: lockPath,
    release() {
      if (held.get(dataDir) !== lockPath) return;
      held.delete(dataDir);
      removeIfOurs(lockPath);
    },
  };
}

/**
 * Removes PostgreSQL's own lock file inside the data directory (`postmaster.pid`), left there by a
 * process that died with the directory open; called with the directory locked (`lockDataDir`), so
 * no other process is starting on it. PostgreSQL creates that file, then writes its pid into it: a
 * kill in between leaves it empty, and PostgreSQL refuses to start on an empty (or unreadable) one
 * ("lock file is empty"), so every later start failed until someone deleted it by hand. It guards
 * nothing here: PGlite's pid is always the same and any other pid reads as dead to it, so it takes
 * over every readable one, and a clean close removes it; the `.lock` file beside the directory is
 * the guard.
 */
export function removeServerLockFile(dataDir: string): void {
  unlinkQuietly(join(dataDir, "postmaster.pid"));
}

function tryCreate(lockPath: string, holder: LockHolder): boolean {
  try {
    writeFileSync(lockPath, JSON.stringify(holder), { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

function readHolder(lockPath: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(lockPath, "utf8")) as LockHolder;
    return Number.isInteger(holder.pid) ? holder : undefined;
  } catch {
    return undefined; // vanished or unreadable: treated as stale
  }
}

function isAlive(holder: LockHolder): boolean {
  // A pid means nothing on another machine (a shared disk): assume it is alive there.
  if (holder.hostname !== hostname()) return true;
  // Our own pid but not in `held`: left by an earlier run that reused this pid.
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the lock file unless another process took it over meanwhile. */
function removeIfOurs(lockPath: string): void {
  if (readHolder(lockPath)?.pid === process.pid) unlinkQuietly(lockPath);
}

function unlinkQuietly(lockPath: string): void {
  try {
    unlinkSync(lockPath);
  } catch {
    // already gone
  }
}
