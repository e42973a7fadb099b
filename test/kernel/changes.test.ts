import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePlugin, type ChangeEvent, type MigratedInfo } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const v1 = schema("1")
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text(), rank: t.integer().nullable() }))
  .build();
const v2 = schema("2").extend(v1).table("tag", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();

describe.each(families())("change events, compile() and the migrated hook on %s", (family) => {
  let database: TestDatabase;
  let built: ReturnType<App<any, any, any>["build"]>;
  const changes: ChangeEvent[] = [];
  const migrated: MigratedInfo[] = [];
  const watcher = definePlugin({
    name: "watcher",
    build(ctx) {
      ctx.hooks.changed.tap((change) => void changes.push(change));
      ctx.hooks.migrated.tap(async (info) => {
        migrated.push(info);
        // Plugin DDL once the tables exist: the migrated hook is where triggers go.
        await sql`create index if not exists note_rank_watch on note (rank)`.execute(ctx.resources.db);
      });
    },
  });

  beforeAll(async () => {
    database = await openDatabase(family);
    built = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).schema(v2).resource("note").use(watcher).build();
    // The build() path: the migrator runs the app's setup first, then the hook.
    const { error } = await built.migrator.migrateToLatest();
    expect(error).toBeUndefined();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  it("runs the migrated hook with the applied names, and again (empty) when nothing was pending", async () => {
    expect(migrated).toEqual([{ applied: ["0001_1", "0002_2"] }]);
    await built.migrator.migrateToLatest();
    expect(migrated.at(-1)).toEqual({ applied: [] });
    const applied = await built.sealed.migrations();
    expect(applied.map(({ name, version }) => ({ name, version }))).toEqual([
      { name: "0001_1", version: "1" },
      { name: "0002_2", version: "2" },
    ]);
    expect(applied[0]!.executedAt).toBeInstanceOf(Date);
  });

  it("emits one event per committed write through resources, with the keys and rows it returned", async () => {
    changes.length = 0;
    const created = await rpc(built, "note.create", { body: "a" });
    await rpc(built, "note.update", { where: { id: created.body.id }, data: { rank: 2 } });
    await rpc(built, "note.delete", { where: { id: created.body.id } });
    const id = created.body.id;
    // Writes through a resource name their actor; a delete's rows are also the rows before it.
    const actor = { kind: "anonymous", userId: null, admin: false };
    expect(changes).toEqual([
      { table: "note", op: "insert", keys: [id], rows: [{ id, body: "a", rank: null }], actor },
      { table: "note", op: "update", keys: [id], rows: [{ id, body: "a", rank: 2 }], actor },
      { table: "note", op: "delete", keys: [id], rows: [{ id, body: "a", rank: 2 }], before: [{ id, body: "a", rank: 2 }], actor },
    ]);
  });

  it("holds a transaction's events until commit, drops them on rollback and for a rolled-back savepoint", async () => {
    changes.length = 0;
    const db = built.db;
    await db
      .transact(async (trx) => {
        await trx.insertInto("note").values({ body: "never" }).execute();
        expect(changes).toEqual([]);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(changes).toEqual([]);

    await db.transact(async (trx) => {
      await trx.insertInto("tag").values({ name: "kept" }).execute();
      await db
        .transact(async (inner) => {
          await inner.insertInto("note").values({ body: "undone" }).execute();
          throw new Error("savepoint only");
        })
        .catch(() => undefined);
      await trx.insertInto("note").values({ body: "kept" }).execute();
      await sql`update note set rank = 1 where rank is null`.execute(trx);
      // A write that matched no row changed nothing: no event.
      await sql`update note set rank = 3 where body = 'nobody'`.execute(trx);
      expect(changes).toEqual([]);
    });
    expect(changes).toEqual([
      { table: "tag", op: "insert" },
      { table: "note", op: "insert" },
      { table: "note", op: "update" },
    ]);
  });

  it("compiles a findMany to its SQL and parameters without running it", async () => {
    const compiled = built.db.query.note.compile({ where: { body: { startsWith: "x%" }, rank: { gt: 1 } }, orderBy: [{ rank: "desc" }], take: 5 });
    expect(compiled.sql).toMatch(/select/i);
    expect(compiled.sql).toContain('"note"');
    expect(compiled.parameters).toEqual(expect.arrayContaining([1, 5]));
    expect(() => built.db.query.note.compile({ where: { nope: 1 } } as never)).toThrow(/nope/);
    // It is the statement findMany runs: executing it as compiled works.
    const { rows } = await built.db.executeQuery(CompiledQuery.raw(compiled.sql, [...compiled.parameters]));
    expect(rows.length).toBeGreaterThanOrEqual(0);
  });
});
