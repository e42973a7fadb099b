/**
 * A version that adds a column with an expression default to an existing table (`timestamps(t)`,
 * `.defaultSql("CURRENT_TIMESTAMP")`) built on SQLite and then failed at every start with
 * "Cannot add a column with non-constant default" (SQLite adds a column only with a constant
 * default), and the step's error told the developer to fix the data it ran into. It is a schema
 * SQLite's DDL cannot express, so it is a `DdlError` at build naming the column and what to do.
 * Constant SQL defaults still migrate on SQLite, and the PostgreSQL family is unchanged.
 */
import { describe, expect, it } from "vitest";
import { DdlError } from "../../kernel/db/ddl.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { families, openDatabase } from "../support/databases.js";

const v1 = schema("1").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() })).build();
const stamped = schema("2").extend(v1).table("post", (t) => ({ ...timestamps(t) })).build();
const counted = schema("2").extend(v1).table("post", (t) => ({ views: t.integer().defaultSql("0"), label: t.text().defaultSql("('none')") })).build();

describe("adding a column with an expression default to an existing table", () => {
  it("is a DdlError at build() on SQLite, naming the column and the fix", async () => {
    const database = await openDatabase("sqlite");
    try {
      const app = () => new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).schema(stamped);
      expect(() => app().build()).toThrow(DdlError);
      expect(() => app().build()).toThrow(
        "Cannot add post.createdAt to the existing table post on SQLite: its default (CURRENT_TIMESTAMP) is an expression, and SQLite adds a column to a table only with a constant default. " +
          "Add it .nullable() without a default (or with a literal .default()) and fill it in code; an expression default is possible on a column of a new table.",
      );
    } finally {
      await database.close();
    }
  });

  it("migrates a constant SQL default on SQLite, filling the existing rows", async () => {
    const database = await openDatabase("sqlite");
    try {
      const first = await new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).start();
      await first.db.insertInto("post").values({ title: "old" }).execute();
      const built = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).schema(counted).build();
      const { error } = await built.migrator.migrateToLatest();
      expect(error).toBeUndefined();
      expect(await built.db.selectFrom("post").select(["title", "views", "label"]).execute()).toEqual([{ title: "old", views: 0, label: "none" }]);
    } finally {
      await database.close();
    }
  });

  it.each(families().filter((family) => family !== "sqlite"))("migrates on %s, giving the existing rows the time of the migration", async (family) => {
    const database = await openDatabase(family);
    try {
      const first = await new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).start();
      await first.db.insertInto("post").values({ title: "old" }).execute();
      const built = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).schema(stamped).build();
      const { error } = await built.migrator.migrateToLatest();
      expect(error).toBeUndefined();
      expect(await built.db.selectFrom("post").select(["title", "createdAt"]).execute()).toEqual([{ title: "old", createdAt: expect.any(Date) }]);
    } finally {
      await database.close();
    }
  });
});
