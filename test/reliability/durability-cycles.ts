import { spawn } from "node:child_process";
import { existsSync, readFileSync, watch } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { fixtureArgs } from "../support/fixture-child.js";

/**
 * Kill-and-reopen cycles on one embedded data directory. Each cycle starts a process that reports
 * what it finds, writes (or migrates), and is killed with SIGKILL at a moment drawn at random among
 * named ones (after its n-th acknowledged write, once it holds the data directory's lock during
 * start-up, at the n-th change the migration makes to the directory), never after a pause, so a
 * loaded machine moves the moments but not what they mean; the next cycle's report is checked
 * against what the dead one had acknowledged. Each process is started one cycle ahead: it loads
 * Trellis and PGlite while the one before it runs, and opens the data directory only when told to,
 * once that one is dead (the lock and the files are as the kill left them). Shared by the suite (10
 * cycles) and `npm run bench` (100).
 */
const CHILD = fileURLToPath(new URL("./durability-child.fixture.mjs", import.meta.url));

export interface CycleReport {
  cycles: number;
  acknowledged: number;
  /** Acknowledged rows missing after a reopen (must be 0). */
  lost: number;
  /** Cycles whose process was killed before it was ready (during start-up). */
  killedStarting: number;
  /** Dead holders whose lock file was left behind and taken over by the next process. */
  staleLocks: number;
  msPerCycle: number;
}

interface Child {
  /** Lets the process open the data directory (it has loaded its modules meanwhile, or is loading them). */
  go(): void;
  lines: string[];
  /** Resolves with the first line matching `pattern` (the `count`-th with `count`). */
  waitFor(pattern: RegExp, timeoutMs?: number, count?: number): Promise<string>;
  pid: number;
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

function start(dataDir: string, mode: "write" | "migrate"): Child {
  const child = spawn(process.execPath, [...fixtureArgs(CHILD), dataDir, mode], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; left: number; resolve: (line: string) => void }[] = [];
  let buffered = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.pattern.test(line) && --waiter.left === 0) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  // A process that died before it was told to go: its exit is what the cycle reports, not the closed pipe.
  child.stdin.on("error", () => {});
  return {
    go: () => void child.stdin.end("go\n"),
    lines,
    exited,
    pid: child.pid!,
    waitFor: (pattern, timeoutMs = 60_000, count = 1) => {
      const found = lines.filter((line) => pattern.test(line));
      if (found.length >= count) return Promise.resolve(found[count - 1]!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} (${count}) within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        waiters.push({ pattern, left: count - found.length, resolve: (line) => (clearTimeout(timer), resolve(line)) });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`process exited (${code}) before ${pattern}; stderr: ${stderr}`));
        });
      });
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Resolves at the `count`-th change under `path` (a file created, written or renamed), or when
 * `until` settles first (the process ended or reached a later step): a named moment, not a pause.
 */
function changes(path: string, count: number, until: Promise<unknown>, accept: () => boolean = () => true): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const watcher = watch(path, { recursive: true }, () => {
      if (accept() && ++seen >= count) done();
    });
    const done = () => (watcher.close(), resolve());
    void until.then(done, done);
    if (accept() && count <= 0) done();
  });
}

/** The lock file names `pid`: that process has opened the data directory and is starting on it. */
const holds = (dataDir: string, pid: number) => {
  try {
    return JSON.parse(readFileSync(`${dataDir}.lock`, "utf8")).pid === pid;
  } catch {
    return false;
  }
};
const staleLock = (dataDir: string) => existsSync(`${dataDir}.lock`) && JSON.parse(readFileSync(`${dataDir}.lock`, "utf8")).pid !== process.pid;

/** Write cycles: every acknowledged row must be there at the next start. */
export async function writeCycles(dataDir: string, cycles: number, random = Math.random): Promise<CycleReport> {
  const acknowledged = new Set<number>();
  const report: CycleReport = { cycles, acknowledged: 0, lost: 0, killedStarting: 0, staleLocks: 0, msPerCycle: 0 };
  const began = Date.now();
  let upcoming = start(dataDir, "write");
  try {
    // One more start than kills: the last one only checks.
    for (let cycle = 0; cycle <= cycles; cycle++) {
      if (staleLock(dataDir)) report.staleLocks++;
      const child = upcoming;
      child.go();
      if (cycle < cycles) upcoming = start(dataDir, "write");
      try {
        // Every fifth kill lands during start-up: once the process holds the lock (opening the
        // directory, migrating), at one of its next few changes to the directory.
        if (cycle < cycles && cycle % 5 === 4) {
          const ready = child.waitFor(/^ROWS/).catch(() => undefined);
          await changes(dirname(dataDir), 0, ready, () => holds(dataDir, child.pid));
          await changes(dataDir, Math.floor(random() * 4), ready);
          const isReady = child.lines.some((line) => line.startsWith("ROWS"));
          await child.kill();
          if (!isReady) {
            report.killedStarting++;
            continue;
          }
        }
        const found = new Set((await child.waitFor(/^ROWS/)).slice(5).split(",").filter(Boolean).map(Number));
        for (const id of acknowledged) if (!found.has(id)) report.lost++;
        if (cycle === cycles) break;
        // At least one acknowledged write per cycle: the kill comes after the n-th, n from 1 to 20.
        await child.waitFor(/^ACK /, 60_000, 1 + Math.floor(random() * 20));
        await child.kill();
        for (const line of child.lines) if (line.startsWith("ACK ")) acknowledged.add(Number(line.slice(4)));
      } finally {
        await child.kill();
      }
    }
  } finally {
    await upcoming.kill();
  }
  report.acknowledged = acknowledged.size;
  report.msPerCycle = Math.round((Date.now() - began) / (cycles + 1));
  return report;
}

export interface MigrationCycleReport {
  /** What each restart found after a kill during migration: the previous version, or the next one whole. */
  states: { applied: string[]; wide: number }[];
  /** Whether the last start migrated to the latest version. */
  migrated: boolean;
}

/** Kills during a migration: the previous version stays (or the next is whole), and the next start migrates. */
export async function migrationCycles(dataDir: string, kills: number, random = Math.random): Promise<MigrationCycleReport> {
  const states: MigrationCycleReport["states"] = [];
  let upcoming = start(dataDir, "migrate");
  try {
    for (let cycle = 0; cycle <= kills; cycle++) {
      const child = upcoming;
      child.go();
      if (cycle < kills) upcoming = start(dataDir, "migrate");
      try {
        states.push(JSON.parse((await child.waitFor(/^STATE /)).slice(6)));
        if (cycle === kills) {
          await child.waitFor(/^MIGRATED$/, 120_000);
          await child.exited;
          return { states, migrated: true };
        }
        await child.waitFor(/^MIGRATING$/);
        // At one of the migration's first changes to the directory (or after it, should it finish first).
        await changes(dataDir, 1 + Math.floor(random() * 6), child.waitFor(/^MIGRATED$/, 120_000).catch(() => undefined));
      } finally {
        await child.kill();
      }
    }
  } finally {
    await upcoming.kill();
  }
  return { states, migrated: false };
}
