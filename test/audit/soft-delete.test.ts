// `softDelete: true` on a resource: delete stamps deletedAt, every read hides the row, restore brings
// it back, the purge removes it for good after purgeAfter; the audit log sees each step.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { nextSnapshot as next } from "../support/snapshots.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { testApp } from "../../presets/testing.js";
import type { DatabaseConfig } from "../../kernel/index.js";

const v1 = schema("1")
  .table("note", (t) => ({ id: t.serial().primaryKey(), title: t.text(), deletedAt: t.timestamp().nullable() }))
  .search("note", { title: "A" })
  .build();

function createApp(db: DatabaseConfig) {
  return new App({ db, onError: () => {} })
    .schema(v1)
    .resource("note", { softDelete: { purgeAfter: "1d" } })
    .audit()
    .procedure("purge", (base) => base.handler(({ context }) => (context as any).softDelete.purge()))
    .procedure("history", (base) =>
      base.handler(async ({ context }) => (await sql<{ op: string; row_key: string }>`select op, row_key from trellis_audit order by id`.execute(context.db)).rows),
    );
}

describe.each(families())("soft delete on %s", (family) => {
  let db: TestDatabase | undefined;
  let config: DatabaseConfig;
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  beforeAll(async () => {
    // The embedded database from the test kit's pool; the others their own.
    if (family === "pglite") {
      const t = await testApp((input) => createApp((config = input.db)));
      app = t.app as never;
    } else {
      db = await openDatabase(family);
      config = { dialect: db.dialect, kind: db.kind };
      app = await createApp(config).start();
    }
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("hides a deleted row from list, search, page, get, update and delete; restore brings it back", async () => {
    const { body: kept } = await rpc(app, "note.create", { title: "kept" });
    const { body: gone } = await rpc(app, "note.create", { title: "gone" });
    const deleted = await rpc(app, "note.delete", { where: { id: gone.id } });
    expect(deleted.status).toBe(200);
    expect(deleted.body.deletedAt).not.toBeNull();
    const row = await app.db.selectFrom("note").selectAll().where("id", "=", gone.id).executeTakeFirst();
    expect(row?.deletedAt).not.toBeNull();

    expect((await rpc(app, "note.list", {})).body.map((note: any) => note.id)).toEqual([kept.id]);
    expect((await rpc(app, "note.page", {})).body.items.map((note: any) => note.id)).toEqual([kept.id]);
    expect((await rpc(app, "note.list", { search: "gone" })).body).toEqual([]);
    expect((await rpc(app, "note.list", { search: "kept" })).body.map((note: any) => note.id)).toEqual([kept.id]);
    expect((await rpc(app, "note.get", { where: { id: gone.id } })).status).toBe(404);
    expect((await rpc(app, "note.update", { where: { id: gone.id }, data: { title: "x" } })).status).toBe(404);
    expect((await rpc(app, "note.delete", { where: { id: gone.id } })).status).toBe(404);
    expect((await rpc(app, "note.restore", { where: { id: kept.id } })).status).toBe(404);

    const restored = await rpc(app, "note.restore", { where: { id: gone.id } });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: gone.id, title: "gone", deletedAt: null });
    expect((await rpc(app, "note.get", { where: { id: gone.id } })).body.title).toBe("gone");
    expect((await rpc(app, "note.list", { search: "gone" })).body.map((note: any) => note.id)).toEqual([gone.id]);
    const history = (await rpc(app, "history")).body.filter((entry: any) => entry.row_key === String(gone.id)).map((entry: any) => entry.op);
    expect(history).toEqual(["insert", "update", "update"]);
  });

  it("purges rows deleted longer ago than purgeAfter, and only those", async () => {
    const { body: old } = await rpc(app, "note.create", { title: "old" });
    const { body: recent } = await rpc(app, "note.create", { title: "recent" });
    await rpc(app, "note.delete", { where: { id: old.id } });
    await rpc(app, "note.delete", { where: { id: recent.id } });
    const stale = new Date(Date.now() - 2 * 86_400_000);
    await app.db.updateTable("note").set({ deletedAt: config.kind === "sqlite" ? (stale.toISOString() as never) : stale }).where("id", "=", old.id).execute();
    expect((await rpc(app, "purge")).body).toBe(1);
    expect(await app.db.selectFrom("note").select("id").where("id", "in", [old.id, recent.id]).execute()).toEqual([{ id: recent.id }]);
  });

  it("refuses a table without a nullable deletedAt at build", () => {
    const bad = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), title: t.text() })).build();
    expect(() => new App({ db: config }).schema(bad).resource("note", { softDelete: true }).build()).toThrow(/nullable timestamp column "deletedAt"/);
  });
});

describe("soft delete and live queries (SQLite)", () => {
  it("drops a soft-deleted row from an open stream and brings it back on restore", async () => {
    const database = await openDatabase("sqlite");
    const app: any = await new App({ db: { dialect: database.dialect, kind: database.kind, live: localLive() } }).schema(v1).resource("note", { softDelete: true, live: true }).start();
    try {
      const { body: note } = await rpc(app, "note.create", { title: "watched" });
      const stream = await app.client().note.live({});
      expect((await next(stream)).value).toMatchObject([{ id: note.id }]);
      await rpc(app, "note.delete", { where: { id: note.id } });
      expect((await next(stream)).value).toEqual([]);
      await rpc(app, "note.restore", { where: { id: note.id } });
      expect((await next(stream)).value).toMatchObject([{ id: note.id, deletedAt: null }]);
      await stream.return();
    } finally {
      await app.close();
      await database.close();
    }
  });
});
