import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { nextSnapshot as next, untilSnapshot as until } from "../support/snapshots.js";

/**
 * docs/live.md: "Within one process, the app's own writes are tracked after commit ... whatever the
 * provider"; a write whose rows are unknown (raw `sql`) re-runs every query on the table. Writes the
 * change feed (kernel/db/changes.ts) does not recognise as writes reach no subscriber at all.
 */

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), title: t.text() })).build();



describe.each<Family>(["pglite", "sqlite"])("writes the change feed must see, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  afterEach(async () => {
    await built?.close();
    await database?.close();
  });

  const start = async () => {
    database = await openDatabase(family);
    const live = family === "sqlite" ? localLive() : { kind: "pglite" };
    built = new App({ db: { dialect: database.dialect, kind: database.kind, live } }).schema(v1).build();
    await built.migrator.migrateToLatest();
    await built.db.insertInto("note").values([{ title: "a" }, { title: "b" }]).execute();
    const controller = new AbortController();
    const stream = built.db.query.note.live({ orderBy: [{ id: "asc" }] }, { signal: controller.signal }) as AsyncIterator<{ title: string }[]>;
    expect((await next(stream)).value.map((row: { title: string }) => row.title)).toEqual(["a", "b"]);
    return { stream, stop: () => controller.abort() };
  };

  it("a raw statement that starts with a comment", async () => {
    const { stream, stop } = await start();
    await sql`/* tidy up */ delete from note where title = ${"a"}`.execute(built.db);
    expect((await until(stream, (rows) => rows.length !== 2)).map((row) => row.title)).toEqual(["b"]);
    stop();
  });

  it("a raw statement with no space before its quoted table name", async () => {
    const { stream, stop } = await start();
    await sql`delete from"note" where title = ${"a"}`.execute(built.db);
    expect((await until(stream, (rows) => rows.length !== 2)).map((row) => row.title)).toEqual(["b"]);
    await sql`update"note"set title = ${"B"}`.execute(built.db);
    expect((await until(stream, (rows) => rows[0]?.title !== "b")).map((row) => row.title)).toEqual(["B"]);
    if (family === "pglite") {
      await sql`truncate"note"`.execute(built.db);
      expect(await until(stream, (rows) => rows.length === 0)).toEqual([]);
    }
    stop();
  });

  it.runIf(family === "sqlite")("a raw INSERT OR REPLACE", async () => {
    const { stream, stop } = await start();
    await sql`insert or replace into note (id, title) values (1, ${"A"})`.execute(built.db);
    expect((await until(stream, (rows) => rows[0]?.title !== "a")).map((row) => row.title)).toEqual(["A", "b"]);
    stop();
  });

  it.runIf(family === "pglite")("a raw TRUNCATE", async () => {
    const { stream, stop } = await start();
    await sql`truncate note`.execute(built.db);
    expect(await until(stream, (rows) => rows.length !== 2)).toEqual([]);
    stop();
  });

  it.runIf(family === "pglite")("a Kysely delete inside a WITH", async () => {
    const { stream, stop } = await start();
    await built.db
      .with("gone", (db: any) => db.deleteFrom("note").where("title", "=", "a").returning("id"))
      .selectFrom("gone")
      .selectAll()
      .execute();
    expect((await until(stream, (rows) => rows.length !== 2)).map((row) => row.title)).toEqual(["b"]);
    stop();
  });

  it.runIf(family === "pglite")("a Kysely MERGE", async () => {
    const { stream, stop } = await start();
    await built.db
      .mergeInto("note as n")
      .using(sql`(select 1 as id)`.as("s") as any, "s.id" as any, "n.id" as any)
      .whenMatched()
      .thenUpdateSet({ title: "A" })
      .execute();
    expect((await until(stream, (rows) => rows[0]?.title !== "a")).map((row) => row.title)).toEqual(["A", "b"]);
    stop();
  });
});
