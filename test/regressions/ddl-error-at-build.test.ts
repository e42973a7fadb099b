/**
 * A schema the DDL cannot express on the app's database (a `serial` that is not the primary key on
 * SQLite, a full-text language SQLite has no tokenizer for) is documented to throw a `DdlError`
 * when the app is built, before anything touches the database. The statements were computed only
 * when the migrator was first used: `build()` succeeded, and `built.migrator.migrateToLatest()`,
 * documented never to throw, rejected with the `DdlError` instead of resolving `{ error }`.
 */
import { describe, expect, it } from "vitest";
import { DdlError } from "../../kernel/db/ddl.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase } from "../support/databases.js";

const serialNotKey = schema("1").table("post", (t) => ({ id: t.text().primaryKey(), n: t.serial() })).build();
const german = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .search("post", { title: "A" }, { language: "german" })
  .build();

describe("a schema SQLite's DDL cannot express", () => {
  it.each([
    ["a serial column that is not the primary key", serialNotKey, "post.n: a serial column must be the sole primary key on sqlite"],
    ["a full-text language SQLite has no tokenizer for", german, `.search("post"): language "german" is PostgreSQL only`],
  ])("%s throws a DdlError at build()", async (_, version, message) => {
    const database = await openDatabase("sqlite");
    try {
      const app = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(version);
      expect(() => app.build()).toThrow(DdlError);
      expect(() => new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(version).build()).toThrow(message);
    } finally {
      await database.close();
    }
  });

  it("start() rejects with it", async () => {
    const database = await openDatabase("sqlite");
    try {
      await expect(new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(serialNotKey).start()).rejects.toThrow(DdlError);
    } finally {
      await database.close();
    }
  });

  it("builds and migrates on the embedded database, which can express both", async () => {
    const database = await openDatabase("pglite");
    try {
      const app = await new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(german).start();
      await app.db.insertInto("post").values({ title: "Häuser" }).execute();
      expect(await app.db.selectFrom("post").select("title").execute()).toEqual([{ title: "Häuser" }]);
      await app.close();
    } finally {
      await database.close();
    }
  });
});
