import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { lockDataDir } from "../../kernel/embedded/lock.js";
import { Kysely, sql } from "kysely";
import { borrowEmbedded, embedded, hostEmbedded, unopenedEmbedded, type EmbeddedDatabase } from "../../kernel/embedded/index.js";

const fixture = fileURLToPath(new URL("./hold-lock.fixture.ts", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "trellis-lock-"));
const children: ChildProcess[] = [];
let count = 0;

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const nextDir = () => join(root, `db${++count}`);
const readLock = (dataDir: string) => JSON.parse(readFileSync(`${dataDir}.lock`, "utf8"));

/** Another process taking the lock; resolves once it holds it. */
function holdLock(dataDir: string, mode: "hold" | "exit"): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, dataDir, mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    // Starting a process with a TypeScript loader takes seconds on a loaded machine.
    const timer = setTimeout(() => reject(new Error(`the lock holder (pid ${child.pid}) did not take the lock within 25 s`)), 25_000);
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("locked") && (clearTimeout(timer), resolve(child)));
    child.on("exit", (code) => (clearTimeout(timer), mode === "exit" && code === 0 ? resolve(child) : reject(new Error(`lock holder exited with ${code}`))));
  });
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", resolve));

describe("data-directory lock", () => {
  it("refuses a directory locked by a live process, naming the directory and the pid", async () => {
    const dataDir = nextDir();
    const holder = await holdLock(dataDir, "hold");
    expect(readLock(dataDir)).toEqual({ pid: holder.pid, hostname: hostname(), startedAt: expect.any(String) });
    expect(() => embedded({ dataDir })).toThrow(
      `The embedded database directory ${dataDir} is locked by process ${holder.pid} on ${hostname()}`,
    );
    expect(readLock(dataDir).pid).toBe(holder.pid); // untouched
  });

  it("takes over the lock of a process that died without releasing it", async () => {
    const dataDir = nextDir();
    const holder = await holdLock(dataDir, "hold");
    holder.kill("SIGKILL"); // no exit handler runs: the file stays behind
    await exited(holder);
    expect(readLock(dataDir).pid).toBe(holder.pid);

    const lock = lockDataDir(dataDir);
    expect(readLock(dataDir).pid).toBe(process.pid);
    lock.release();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it("is released when the holding process exits", async () => {
    const dataDir = nextDir();
    await exited(await holdLock(dataDir, "exit"));
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it("refuses a second lock on the same directory in this process until the first is released", () => {
    const dataDir = nextDir();
    const lock = lockDataDir(dataDir);
    expect(() => lockDataDir(dataDir)).toThrow(`${dataDir} is already open in this process (pid ${process.pid})`);
    lock.release();
    lockDataDir(dataDir).release();
  });

  it("puts the lock file beside the directory, not inside it", () => {
    const dataDir = nextDir();
    const lock = lockDataDir(dataDir);
    expect(lock.path).toBe(`${dataDir}.lock`);
    lock.release();
  });

  it("lends one open directory through a host: borrowers share the instance, closing one leaves it open", { timeout: 60_000 }, async () => {
    const dataDir = nextDir();
    let lent: EmbeddedDatabase | undefined;
    hostEmbedded((_dir, open) => borrowEmbedded((lent ??= open())));
    try {
      const first = embedded({ dataDir });
      const second = embedded({ dataDir });
      expect(second.client).toBe(first.client);
      expect(first.dataDir).toBe(dataDir);
      const before = new Kysely<any>({ dialect: first.dialect });
      await sql`create table kept (n int); insert into kept values (1)`.execute(before);
      await before.destroy(); // as App.close() does: the instance stays open
      const after = new Kysely<any>({ dialect: second.dialect });
      expect((await sql<{ n: number }>`select n from kept`.execute(after)).rows).toEqual([{ n: 1 }]);
      await after.destroy();
      expect(readLock(dataDir).pid).toBe(process.pid);
    } finally {
      hostEmbedded(undefined);
      await lent?.close();
    }
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    // A database that is never opened takes no lock, and a query on it says why.
    hostEmbedded((dir) => unopenedEmbedded(dir, "the app is only built"));
    try {
      const never = embedded({ dataDir });
      await expect(never.probe()).rejects.toMatchObject({ code: "EMBEDDED_NOT_OPENED", message: expect.stringContaining("the app is only built") });
      expect(existsSync(`${dataDir}.lock`)).toBe(false);
    } finally {
      hostEmbedded(undefined);
    }
  });
});
