// Child processes in tests: waiting for a line they print, and for their exit, each with a limit that
// names the wait and shows what the child printed; and killing the ones a failed test left running.
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { afterEach } from "vitest";

/** Everything `child` prints on stdout and stderr from now on. */
export function outputOf(child: ChildProcess): { text: string } {
  const output = { text: "" };
  child.stdout?.on("data", (chunk) => (output.text += chunk));
  child.stderr?.on("data", (chunk) => (output.text += chunk));
  return output;
}

/**
 * The first match of `pattern` in what `child` prints on stdout; fails when the child exits first
 * or prints no match within `ms`, with its output.
 */
export function waitForOutput(child: ChildProcess, pattern: RegExp, ms: number, what: string): Promise<RegExpExecArray> {
  let seen = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  return new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: nothing matching ${pattern} within ${ms / 1000} s:\n${seen}${stderr}`)), ms);
    child.stdout!.on("data", (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what}: the process exited (${signal ?? code}) first:\n${seen}${stderr}`));
    });
  });
}

/** The child's exit, or a failure naming `what` when it has not exited within `ms`. */
export function exitOf(child: ChildProcess, ms: number, what: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: process ${child.pid} did not exit within ${ms / 1000} s`)), ms);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/**
 * Children passed to the returned function are SIGKILLed after each test if still running (with
 * their process group when `group` is set, for children spawned `detached`), so a failed test leaves
 * none behind.
 */
export function killAfterEach(): <T extends ChildProcess>(child: T, options?: { group?: boolean }) => T {
  const started: { child: ChildProcess; group: boolean }[] = [];
  afterEach(() => {
    for (const { child, group } of started.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
      try {
        process.kill(group ? -child.pid : child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
  return (child, options = {}) => {
    started.push({ child, group: Boolean(options.group) });
    return child;
  };
}

/**
 * Whether any process of the group `pgid` still runs. Read from /proc where there is one: an
 * exited process nobody has reaped yet (a zombie, as under a PID 1 that does not reap) counts as gone.
 */
export function groupRunning(pgid: number): boolean {
  if (!existsSync("/proc/self/stat")) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended while listing
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}
