import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase } from "../support/databases.js";

const dir = mkdtempSync(join(tmpdir(), "trellis-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();
const v2 = schema("2").extend(v1).table("item", (t) => ({ note: t.text().nullable() })).build();
const broken = schema("3")
  .extend(v2)
  .table("audit", (t) => ({ id: t.serial().primaryKey(), at: t.timestamp().defaultSql("not_a_function()") }))
  .build();

const tables = async (app: { db: any }) =>
  (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public' order by 1`.execute(app.db)).rows.map((r) => r.name);

describe("start() on a data directory", () => {
  const dataDir = join(dir, "data");

  it("migrates, keeps data across close and reopen, and applies nothing the second time", async () => {
    const first = await new App({ db: embedded({ dataDir }) }).schema(v1).schema(v2).resource("item").start();
    expect((await rpc(first, "item.create", { name: "kept", note: "v2 column" })).status).toBe(200);
    await first.close();

    const second = await new App({ db: embedded({ dataDir }) }).schema(v1).schema(v2).resource("item").start();
    const { results } = await second.migrator.migrateToLatest();
    expect(results).toEqual([]);
    expect((await rpc(second, "item.list", {})).body).toMatchObject([{ name: "kept", note: "v2 column" }]);
    await second.close();
  }, 120_000); // the process's first embedded start (initdb), then a reopen: slow on a loaded machine

  it("throws from start() when a step fails, leaving the database at the previous version", async () => {
    const app = new App({ db: embedded({ dataDir }) }).schema(v1).schema(v2).schema(broken);
    await expect(app.start()).rejects.toThrow(/not_a_function/);
    const after = await new App({ db: embedded({ dataDir }) }).schema(v1).schema(v2).start();
    expect(await tables(after)).not.toContain("audit");
    expect((await after.migrator.getMigrations()).filter((m) => m.executedAt).map((m) => m.name)).toEqual(["0001_1", "0002_2"]);
    await after.close();
  }, 120_000); // two embedded starts on a data directory

  it("refuses an unsafe change at build, naming the table, column and versions", () => {
    const retyped = schema("4").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.integer() })).build();
    const app = new App({ db: embedded({ dataDir: "memory://" }) }).schema(v1).schema(retyped);
    expect(() => app.build()).toThrow(/item\.name[\s\S]*"1"[\s\S]*"4"|"1"[\s\S]*"4"[\s\S]*item\.name/);
  });

  it("fails fast when a second app opens a data directory already in use", async () => {
    const open = await new App({ db: embedded({ dataDir }) }).schema(v1).schema(v2).start();
    expect(() => embedded({ dataDir })).toThrow(`The embedded database directory ${dataDir} is already open in this process (pid ${process.pid})`);
    await open.close();
  }, 60_000);
});

describe("SQLite through a plain Kysely dialect", () => {
  it("enforces foreign keys whatever dialect the integrator passed", async () => {
    const { default: Database } = await import("better-sqlite3");
    const { SqliteDialect } = await import("kysely");
    const v = schema("1")
      .table("author", (t) => ({ id: t.serial().primaryKey() }))
      .table("book", (t) => ({ id: t.serial().primaryKey(), authorId: t.integer().references("author", "id") }))
      .build();
    // better-sqlite3 builds with foreign keys on; switch them off as another driver or setting might.
    const database = new Database(":memory:");
    database.pragma("foreign_keys = OFF");
    const app = await new App({ db: { dialect: new SqliteDialect({ database }), kind: "sqlite" } })
      .schema(v)
      .resource("book")
      .start();
    const orphan = await rpc(app, "book.create", { authorId: 42 });
    expect(orphan.status).toBe(409);
    await app.close();
  });
});

describe.runIf(families().includes("postgres"))("several apps in schemas of one PostgreSQL database", () => {
  it("each migrates into its own schema, whatever the others hold", async () => {
    const first = await openDatabase("postgres");
    const second = await openDatabase("postgres");
    const a = await new App({ db: { dialect: first.dialect, kind: "postgres" } }).schema(v1).resource("item").start();
    const b = await new App({ db: { dialect: second.dialect, kind: "postgres" } }).schema(v1).schema(v2).resource("item").start();
    expect((await rpc(b, "item.create", { name: "in b", note: "v2" })).status).toBe(200);
    expect((await rpc(a, "item.list", {})).body).toEqual([]);
    expect((await b.migrator.getMigrations()).filter((m) => m.executedAt).map((m) => m.name)).toEqual(["0001_1", "0002_2"]);
    await a.close();
    await b.close();
    await first.close();
    await second.close();
  });
});
