import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { definePlugin } from "../../kernel/index.js";
import { localLive, postgresLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { keySessions } from "../support/key-sessions.js";
import { nextSnapshot as next, untilSnapshot as until } from "../support/snapshots.js";

/**
 * A write re-runs only the live queries it can affect, and every one it can: a row entering or
 * leaving a filter, a delete, a row moving between owners, on each family, through the typed
 * client's live iterators (owner-scoped resource streams) and `db.query.<t>.live`.
 */

const v1 = schema("1")
  .table("note", (t) => ({ id: t.serial().primaryKey(), ownerId: t.text().nullable(), title: t.text(), status: t.text() }))
  .build();

/** Every statement reading `note` that is not a write: one per live query re-run. */
function reads(log: string[]) {
  return definePlugin({
    name: "reads",
    build: (ctx) => ctx.need("instrumentation").add({ statement: (text, run) => (/^\s*select/i.test(text) && /"note"/.test(text) && log.push(text), run()) }),
  });
}

const settle = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Waits until no query re-ran for `ms` (at most 15 s), so re-runs of earlier writes, which a
 * loaded machine can delay past a fixed pause, land before the log is cleared.
 */
async function quiet(log: string[], ms: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (let seen = -1; seen !== log.length; ) {
    if (Date.now() > deadline) throw new Error(`live queries still re-running after 15 s:\n${log.slice(-5).join("\n")}`);
    seen = log.length;
    await settle(ms);
  }
}
const titles = (rows: { title: string }[]) => rows.map((row) => row.title).sort().join(",");

describe.each<Family>(families())("live queries re-run only for changes that can affect them, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  const log: string[] = [];

  beforeAll(async () => {
    database = await openDatabase(family);
    const live = family === "sqlite" ? localLive() : family === "pglite" ? { kind: "pglite" } : postgresLive({ connectionString: process.env.DATABASE_URL! });
    built = new App({ db: { dialect: database.dialect, kind: database.kind, live } })
      .schema(v1)
      .use(keySessions)
      .use(reads(log))
      .resource("note", {
        ownerColumn: "ownerId",
        permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" },
        live: { revalidateMs: false, max: 20, maxPerCaller: 5 },
      })
      .build();
    await built.migrator.migrateToLatest();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  it("an update moving a row out of the filter, then a delete, reach the owner's stream; another owner's stream is not re-run", async () => {
    const ada = built.client({ "x-api-key": "ada" });
    const bob = built.client({ "x-api-key": "bob" });
    const adas = await ada.note.live({ where: { status: "open" }, orderBy: [{ id: "asc" }] });
    const bobs = await bob.note.live({ where: { status: "open" } });
    expect((await next(adas)).value).toEqual([]);
    expect((await next(bobs)).value).toEqual([]);

    const first = await ada.note.create({ title: "one", status: "open" });
    expect((await next(adas)).value).toMatchObject([{ id: first.id, title: "one", ownerId: "ada" }]);
    const second = await ada.note.create({ title: "two", status: "open" });
    expect((await next(adas)).value).toMatchObject([{ id: first.id }, { id: second.id }]);

    await quiet(log, family === "postgres" ? 1000 : 150);
    log.length = 0;
    await ada.note.update({ where: { id: first.id }, data: { status: "done" } });
    expect((await next(adas)).value).toMatchObject([{ id: second.id }]);
    await settle();
    // Ada's query ran again (PostgreSQL hears its own write twice: the app's feed and NOTIFY); Bob's never.
    expect(log.length).toBeGreaterThanOrEqual(1);
    expect(log.length).toBeLessThanOrEqual(family === "postgres" ? 2 : 1);

    await ada.note.delete({ where: { id: second.id } });
    expect((await next(adas)).value).toEqual([]);

    // A done row coming back into the filter enters it again.
    await ada.note.update({ where: { id: first.id }, data: { status: "open" } });
    expect((await next(adas)).value).toMatchObject([{ id: first.id, status: "open" }]);
    await adas.return();
    await bobs.return();
  });

  it("a row moving between owners leaves one stream and enters the other, with or without RETURNING", async () => {
    const ada = await built.client({ "x-api-key": "ada" }).note.live({ orderBy: [{ id: "asc" }] });
    const cy = await built.client({ "x-api-key": "cy" }).note.live({ orderBy: [{ id: "asc" }] });
    const before = (await next(ada)).value;
    expect((await next(cy)).value).toEqual([]);
    const [row] = await built.db.insertInto("note").values({ ownerId: "ada", title: "moving", status: "open" }).returningAll().execute();
    expect((await next(ada)).value).toHaveLength(before.length + 1);

    await built.db.updateTable("note").set({ ownerId: "cy" }).where("id", "=", row.id).returningAll().execute();
    expect((await next(ada)).value).toEqual(before);
    expect((await next(cy)).value).toMatchObject([{ id: row.id, ownerId: "cy" }]);

    // No RETURNING: the change names no rows, so every query on the table re-runs.
    await built.db.updateTable("note").set({ ownerId: "ada" }).where("id", "=", row.id).execute();
    expect((await next(cy)).value).toEqual([]);
    expect((await next(ada)).value).toHaveLength(before.length + 1);
    await ada.return();
    await cy.return();
  });

  it("falls back to re-running what a written row cannot decide: a key the statement rewrote, skip, unknown columns", async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    onTestFinished(() => controller.abort());
    const [row] = await built.db.insertInto("note").values({ ownerId: "dee", title: "key", status: "open" }).returningAll().execute();
    const byKey = built.db.query.note.live({ where: { ownerId: "dee" } }, { signal });
    const skipped = built.db.query.note.live({ where: { ownerId: "dee" }, orderBy: [{ title: "asc" }], skip: 1 }, { signal });
    const titled = built.db.query.note.live({ where: { ownerId: "dee", title: { startsWith: "k" } } }, { signal });
    expect((await next(byKey)).value).toMatchObject([{ id: row.id }]);
    expect((await next(skipped)).value).toEqual([]);
    expect((await next(titled)).value).toMatchObject([{ id: row.id }]);

    // The primary key rewritten: the returned key is the new one, the old one is gone from the snapshot.
    const moved = row.id + 100_000;
    await built.db.updateTable("note").set({ id: moved }).where("id", "=", row.id).returningAll().execute();
    expect((await next(byKey)).value).toMatchObject([{ id: moved }]);
    expect((await next(titled)).value).toMatchObject([{ id: moved }]);

    // Only the key returned: the new title is unknown, so the filter on it re-runs.
    await built.db.insertInto("note").values({ ownerId: "dee", title: "kite", status: "open" }).returning("id").execute();
    await until(skipped, (rows: any) => titles(rows) === "kite");
    await until(titled, (rows: any) => titles(rows) === "key,kite");
    await built.db.updateTable("note").set({ title: "zebra" }).where("id", "=", moved).returning("id").execute();
    await until(titled, (rows: any) => titles(rows) === "kite");

    // Raw SQL names no rows: everything on the table re-runs.
    await sql`delete from note where id = ${moved}`.execute(built.db);
    await until(byKey, (rows: any) => titles(rows) === "kite");
    await until(skipped, (rows: any) => rows.length === 0);
  });

  // Another process writing is a PostgreSQL server's case: the embedded and SQLite databases admit one process.
  it.runIf(family === "postgres")("a write by another process (NOTIFY with its rows) re-runs only the queries it affects", async () => {
    const ada = await built.client({ "x-api-key": "ada" }).note.live({ where: { status: "open" }, orderBy: [{ id: "asc" }] });
    const eve = await built.client({ "x-api-key": "eve" }).note.live({ orderBy: [{ id: "asc" }] });
    const adas = (await next(ada)).value;
    expect((await next(eve)).value).toEqual([]);
    const outside = new pg.Client({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${database.schema}` });
    await outside.connect();
    try {
      // Notifications of earlier writes may still be on their way.
      await quiet(log, 1000);
      log.length = 0;
      const { rows } = await outside.query("insert into note (\"ownerId\", title, status) values ('eve', 'from outside', 'open') returning id");
      expect((await next(eve)).value).toMatchObject([{ id: rows[0].id, title: "from outside" }]);
      await settle(300);
      expect(log, log.join("\n")).toHaveLength(1);

      // Moved to Ada by another process: leaves Eve's stream, enters Ada's.
      await outside.query(`update note set "ownerId" = 'ada' where id = $1`, [rows[0].id]);
      expect((await next(eve)).value).toEqual([]);
      expect((await next(ada)).value).toHaveLength(adas.length + 1);
      await outside.query(`delete from note where id = $1`, [rows[0].id]);
      expect((await next(ada)).value).toEqual(adas);
    } finally {
      await outside.end();
      await ada.return();
      await eve.return();
    }
  });
});
