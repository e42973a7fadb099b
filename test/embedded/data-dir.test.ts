import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely, sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { embedded, type EmbeddedDatabase } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";

const root = mkdtempSync(join(tmpdir(), "trellis-datadir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process that has exited. */
function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  return new Promise((resolve) => child.on("exit", () => resolve(child.pid!)));
}

function openInCwd(cwd: string): EmbeddedDatabase {
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    return embedded();
  } finally {
    process.chdir(previous);
  }
}

it("defaults to <cwd>/.app/embedded, takes over a stale lock, and keeps data across close and reopen", async () => {
  const dataDir = join(root, ".app", "embedded");
  const lockPath = `${dataDir}.lock`;
  mkdirSync(join(root, ".app"));
  writeFileSync(lockPath, JSON.stringify({ pid: await deadPid(), hostname: hostname(), startedAt: "2020-01-01T00:00:00.000Z" }));

  const first = openInCwd(root);
  expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: process.pid, hostname: hostname() });
  expect(() => embedded({ dataDir })).toThrow(`${dataDir} is already open in this process (pid ${process.pid})`);

  const db = new Kysely<any>({ dialect: first.dialect });
  await db.schema.createTable("note").addColumn("id", "integer").addColumn("body", "text").execute();
  await db.insertInto("note").values({ id: 1, body: "kept" }).execute();
  await db.destroy(); // closes the instance and releases the lock
  expect(first.client.closed).toBe(true);
  expect(existsSync(lockPath)).toBe(false);
  expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);

  const second = embedded({ dataDir: `file://${dataDir}` });
  const reopened = new Kysely<any>({ dialect: second.dialect });
  expect(await reopened.selectFrom("note").selectAll().execute()).toEqual([{ id: 1, body: "kept" }]);
  expect((await sql<{ v: string }>`select '[1,2]'::vector as v`.execute(reopened)).rows).toEqual([{ v: "[1,2]" }]);
  await second.close();
  expect(existsSync(lockPath)).toBe(false);
  await reopened.destroy(); // after close(): nothing left to do, and no error
}, 120_000); // initdb in a child process, then the database thread starts: slow on a loaded machine

/**
 * A process killed while PostgreSQL starts on the directory, between creating its own lock file
 * (`postmaster.pid`, inside the directory) and writing its pid into it, leaves that file empty, and
 * PostgreSQL refuses to start on an empty one ("lock file is empty"): every later start failed with
 * "PGlite failed to initialize properly" until someone deleted it by hand. The state here is the one
 * test/reliability/durability.test.ts's start-up kills left behind.
 */
it("reopens a directory left by a process killed as PostgreSQL started on it (its lock file created, still empty)", async () => {
  const dataDir = join(root, "killed-starting");
  const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
  const open = () => new App({ db: embedded({ dataDir }), health: false }).schema(v1).resource("note", { permissions: { list: "public", create: "public" } }).start();
  const first = await open();
  expect((await rpc(first, "note.create", { text: "before the kill" })).status).toBe(200);
  await first.close();

  writeFileSync(join(dataDir, "postmaster.pid"), "");
  writeFileSync(`${dataDir}.lock`, JSON.stringify({ pid: await deadPid(), hostname: hostname(), startedAt: "2020-01-01T00:00:00.000Z" }));
  const reopened = await open();
  expect((await rpc(reopened, "note.list", {})).body).toMatchObject([{ text: "before the kill" }]);
  await reopened.close();
}, 120_000); // two embedded starts on a new directory: slow on a loaded machine

it("a directory PostgreSQL will not start on fails with PostgreSQL's reason, and is let go", async () => {
  const dataDir = join(root, "incompatible");
  const db = embedded({ dataDir });
  await db.ready();
  await db.close();
  // As a directory made by a PGlite on another major version of PostgreSQL reads.
  writeFileSync(join(dataDir, "PG_VERSION"), "16\n");
  const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
  const app = new App({ db: embedded({ dataDir }), health: false }).schema(v1).resource("note");
  await expect(app.start()).rejects.toThrow(/failed to initialize.*PostgreSQL: FATAL: database files are incompatible with server DETAIL: The data directory was initialized by PostgreSQL version 16/);
  expect(existsSync(`${dataDir}.lock`)).toBe(false);
}, 120_000);
