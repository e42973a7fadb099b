import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { nextSnapshot as next, untilSnapshot as until } from "../support/snapshots.js";

/**
 * A write the database carries on through foreign keys (`onDelete: "cascade"`, `"set null"`,
 * `onUpdate: "cascade"`) changes rows of the referencing table that no statement named. The change
 * feed reported only the statement's own table, so live queries on the referencing table kept
 * showing rows that were gone (or their old values) until some other write touched that table.
 */
const v1 = schema("1")
  .table("author", (t) => ({ id: t.text().primaryKey(), name: t.text() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    authorId: t.text().references("author", "id", { onDelete: "cascade", onUpdate: "cascade" }),
  }))
  .table("comment", (t) => ({
    id: t.serial().primaryKey(),
    text: t.text(),
    postId: t.integer().nullable().references("post", "id", { onDelete: "set null" }),
  }))
  .build();



describe.each<Family>(families())("live queries over rows a foreign key changes, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  let controller: AbortController;
  afterEach(async () => {
    controller.abort();
    await built?.close();
    await database?.close();
  });

  const start = async () => {
    controller = new AbortController();
    database = await openDatabase(family);
    const live = family === "sqlite" ? localLive() : family === "pglite" ? { kind: "pglite" } : undefined;
    built = new App({ db: { dialect: database.dialect, kind: database.kind, ...(live && { live }) } })
      .schema(v1)
      .resource("author", { permissions: { delete: "public", update: "public" } })
      .build();
    await built.migrator.migrateToLatest();
    await built.db.insertInto("author").values([{ id: "ann", name: "Ann" }, { id: "bob", name: "Bob" }]).execute();
    await built.db.insertInto("post").values([{ title: "by ann", authorId: "ann" }, { title: "by bob", authorId: "bob" }]).execute();
    await built.db.insertInto("comment").values([{ text: "on ann's", postId: 1 }]).execute();
  };
  const watch = (table: string, args: object) => built.db.query[table].live(args, { signal: controller.signal }) as AsyncIterator<Record<string, unknown>[]>;

  it("a delete that cascades: the referencing rows leave the live result, and set-null rows change", async () => {
    await start();
    const posts = watch("post", { orderBy: [{ id: "asc" }] });
    const comments = watch("comment", { where: { postId: { equals: 1 } } });
    expect((await next(posts)).value.map((row: Record<string, unknown>) => row.title)).toEqual(["by ann", "by bob"]);
    expect((await next(comments)).value.map((row: Record<string, unknown>) => row.text)).toEqual(["on ann's"]);

    expect(await rpc(built, "author.delete", { where: { id: "ann" } })).toMatchObject({ status: 200, body: { id: "ann", name: "Ann" } });
    expect((await until(posts, (rows) => rows.length !== 2)).map((row) => row.title)).toEqual(["by bob"]);
    expect(await until(comments, (rows) => rows.length !== 1)).toEqual([]);
  });

  it("an update of a referenced key that cascades: the referencing rows show the new key", async () => {
    await start();
    const posts = watch("post", { where: { authorId: { equals: "bob" } } });
    expect((await next(posts)).value.map((row: Record<string, unknown>) => row.title)).toEqual(["by bob"]);
    await sql`update author set id = 'robert' where id = 'bob'`.execute(built.db);
    expect(await until(posts, (rows) => rows.length !== 1)).toEqual([]);
  });
});
