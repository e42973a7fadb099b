import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, type ChangeEvent } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/**
 * The change feed holds a transaction's writes until it commits and drops those of a savepoint
 * rolled back (kernel/db/changes.ts). Kysely's own savepoints (`trx.savepoint(name)` then
 * `rollbackToSavepoint(name)`) must drop theirs too: a change event (a webhook delivery, a live
 * re-run) for a row that was never written is a wrong answer.
 */
const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.each<Family>(families())("a write rolled back to a Kysely savepoint, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  afterEach(async () => {
    await built?.close();
    await database?.close();
  });

  it("reaches no change listener", async () => {
    const changes: ChangeEvent[] = [];
    database = await openDatabase(family);
    built = new App({ db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .use(definePlugin({ name: "watcher", build: (ctx) => ctx.hooks.changed.tap((change) => void changes.push(change)) }))
      .procedure("note.twice", (base) =>
        base.handler(async ({ context }) => {
          const db = context.db as any;
          const trx = await db.startTransaction().execute();
          await trx.insertInto("note").values({ body: "kept" }).returningAll().execute();
          const point = await trx.savepoint("undo").execute();
          await point.insertInto("note").values({ body: "undone" }).returningAll().execute();
          await point.rollbackToSavepoint("undo").execute();
          await trx.commit().execute();
          return (await db.selectFrom("note").select("body").execute()).map((row: { body: string }) => row.body);
        }),
      )
      .build();
    await built.migrator.migrateToLatest();
    changes.length = 0;
    const { status, body } = await rpc(built, "note.twice");
    expect([status, body]).toEqual([200, ["kept"]]);
    expect(changes.map((change) => (change.rows ?? []).map((row) => row.body))).toEqual([["kept"]]);
  });
});
