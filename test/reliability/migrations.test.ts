import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families } from "../support/databases.js";
import { reopenable, type Reopenable } from "./reopenable.js";

const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();
const v2 = schema("2").extend(v1).table("item", (t) => ({ note: t.text().nullable() })).build();
const v3 = schema("3").extend(v2).table("tag", (t) => ({ id: t.serial().primaryKey(), label: t.text() })).build();
// Fails at run time on every family once two rows share a name: a unique index over duplicates.
const broken = schema("3")
  .extend(v2)
  .table("tag", (t) => ({ id: t.serial().primaryKey(), label: t.text() }))
  .table("item", (t) => ({ name: t.text().unique() }))
  .build();

let database: Reopenable | undefined;
afterEach(async () => {
  await database?.cleanup();
  database = undefined;
});

const applied = async (app: { sealed: { migrations(): Promise<{ name: string; checksum?: string }[]> } }) => (await app.sealed.migrations()).map((m) => m.name);
const tableNames = async (app: { db: any }, kind: "postgres" | "sqlite") => {
  const query =
    kind === "postgres"
      ? sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema() order by 1`
      : sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by 1`;
  return (await query.execute(app.db)).rows.map((row) => row.name);
};

// A PGlite data directory is created (initdb) for each test: slow on a loaded machine.
describe.each(families())("migrations on %s", { timeout: 180_000 }, (family) => {
  it("a failed step leaves the previous version and names the step, its version, the statement and the database's message", async () => {
    database = await reopenable(family);
    const first = await new App({ db: database.open() }).schema(v1).resource("item").start();
    expect((await rpc(first, "item.create", { name: "kept" })).status).toBe(200);
    expect((await rpc(first, "item.create", { name: "kept" })).status).toBe(200);
    await first.close();

    const error = await new App({ db: database.open() }).schema(v1).schema(v2).schema(broken).start().then(
      () => undefined,
      (failure) => failure,
    );
    expect(error).toMatchObject({ code: "MIGRATION_STEP_FAILED", step: "0003_3", version: "3" });
    expect(error.message).toMatch(/Migration 0003_3 \(schema version "3"\) failed at statement 1 of \d+: .*(unique|UNIQUE)/);
    expect(error.message).toContain('statement: create unique index "item_name_key"');
    expect(error.message).toMatch(/rolled back/);

    // The build() path: the same setup and checks, no start(). Still at version 1, row kept.
    const built = new App({ db: database.open() }).schema(v1).schema(v2).resource("item").build();
    expect(await applied(built)).toEqual(["0001_1"]);
    const kind = family === "sqlite" ? "sqlite" : "postgres";
    expect(await tableNames(built, kind)).not.toContain("tag");
    const { error: none, results } = await built.migrator.migrateToLatest();
    expect(none).toBeUndefined();
    expect(results?.map((r) => r.migrationName)).toEqual(["0002_2"]);
    expect((await rpc(built, "item.list", {})).body).toMatchObject([{ name: "kept", note: null }, { name: "kept", note: null }]);
    await built.close();
  });

  it("stores a checksum per applied version and refuses a changed one, naming the version, tables and columns", async () => {
    database = await reopenable(family);
    const first = await new App({ db: database.open() }).schema(v1).schema(v2).start();
    const migrations = await first.sealed.migrations();
    expect(migrations.map((m) => [m.name, m.checksum?.length])).toEqual([
      ["0001_1", 64],
      ["0002_2", 64],
    ]);
    await first.close();

    const edited = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.integer(), extra: t.text().nullable() })).build();
    const editedV2 = schema("2").extend(edited).table("item", (t) => ({ note: t.text().nullable() })).build();
    const drift = await new App({ db: database.open() }).schema(edited).schema(editedV2).start().catch((failure) => failure);
    expect(drift).toMatchObject({ code: "MIGRATION_DRIFT" });
    expect(drift.message).toContain('version "1" (0001_1): table item: column name was "text not null", now "integer not null", column extra added');
    expect(drift.message).toMatch(/new version/);

    // Still usable with the history as it was applied.
    const again = await new App({ db: database.open() }).schema(v1).schema(v2).schema(v3).start();
    expect(await applied(again)).toEqual(["0001_1", "0002_2", "0003_3"]);
    await again.close();
  });

  it("names a registered history with a gap, or out of order, instead of Kysely's 'corrupted migrations'", async () => {
    database = await reopenable(family);
    await (await new App({ db: database.open() }).schema(v1).schema(v2).start()).close();

    const gap = await new App({ db: database.open() }).schema(v1).schema(v3).start().catch((failure) => failure);
    expect(gap).toMatchObject({ code: "MIGRATION_VERSION_MISSING" });
    expect(gap.message).toContain('version "2" was applied as step 2 (0002_2) but the app does not register it (step 2 is "3" now)');

    const older = await new App({ db: database.open() }).schema(v1).start().catch((failure) => failure);
    expect(older).toMatchObject({ code: "MIGRATION_VERSION_MISSING" });

    const swapped = await new App({ db: database.open() }).schema(schema("2").table("x", (t) => ({ id: t.serial().primaryKey() })).build()).schema(v1).start().catch((failure) => failure);
    expect(swapped).toMatchObject({ code: "MIGRATION_VERSION_ORDER" });
    expect(swapped.message).toContain('version "1" was applied as step 1 (0001_1) but is registered as step 2 (0002_1)');
  });
});

describe.runIf(families().includes("postgres"))("build() then migrator.migrateToLatest() on PostgreSQL", () => {
  it("keeps the bookkeeping in the app's own schema, as start() does", async () => {
    database = await reopenable("postgres");
    const built = new App({ db: database.open() }).schema(v1).build();
    expect((await built.migrator.migrateToLatest()).error).toBeUndefined();
    const { rows } = await sql<{ schema: string; name: string }>`select schemaname as schema, tablename as name from pg_tables where tablename in ('kysely_migration', 'trellis_migration') order by 2, 1`.execute(built.db);
    expect(rows.filter((row) => row.schema === database!.schema).map((row) => row.name)).toEqual(["kysely_migration", "trellis_migration"]);
    expect(rows.filter((row) => row.schema === "public")).toEqual([]);
    await built.close();
  });
});

describe("build() then migrator.migrateToLatest() on SQLite", () => {
  it("turns foreign keys on before migrating, whatever the dialect", async () => {
    const { default: Database } = await import("better-sqlite3");
    const { SqliteDialect } = await import("kysely");
    const connection = new Database(":memory:");
    connection.pragma("foreign_keys = OFF");
    const v = schema("1")
      .table("author", (t) => ({ id: t.serial().primaryKey() }))
      .table("book", (t) => ({ id: t.serial().primaryKey(), authorId: t.integer().references("author", "id") }))
      .build();
    const built = new App({ db: { dialect: new SqliteDialect({ database: connection }), kind: "sqlite" } }).schema(v).build();
    expect((await built.migrator.migrateToLatest()).error).toBeUndefined();
    expect(connection.pragma("foreign_keys", { simple: true })).toBe(1);
    await expect(built.db.insertInto("book").values({ authorId: 42 }).execute()).rejects.toThrow(/FOREIGN KEY/);
    await built.close();
  });
});
