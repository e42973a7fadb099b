import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planMigrations } from "../../kernel/db/diff.js";
import { createMigrationProvider } from "../../kernel/db/migrations.js";
import { checksumOf, definitionOf } from "../../kernel/db/version-record.js";
import { schema } from "../../kernel/schema/index.js";
import { SchemaError } from "../../kernel/schema/errors.js";
import { families } from "../support/databases.js";
import { errorOf } from "../support/app.js";
import { openHarness, type Harness } from "./harness.js";

// v1 has rows and no index; v2 indexes title and body; v3 re-weighs and stems; v4 drops the index;
// v5 indexes a column it adds in the same version.
const v1 = schema("1")
  .table("post", (t) => ({ id: t.text().primaryKey(), title: t.text(), body: t.text().nullable(), views: t.integer().default(0) }))
  .build();
const v2 = schema("2").extend(v1).search("post", ["title", "body"]).build();
const v3 = schema("3").extend(v2).search("post", { title: "B", body: "A" }, { language: "english" }).build();
const v4 = schema("4").extend(v3).search("post", false).build();
const v5 = schema("5")
  .extend(v4)
  .table("post", (t) => ({ summary: t.text().nullable() }))
  .search("post", { summary: "A" })
  .build();

describe("declaring a full-text index", () => {
  it("is refused with SCHEMA_SEARCH_INVALID for an unknown table or column, a non-text column, a bad weight or language", () => {
    const base = schema("1").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), views: t.integer(), rank: t.text() }));
    const cases: [() => unknown, string][] = [
      [() => base.search("nope" as "post", ["title"]), 'table "nope" does not exist'],
      [() => base.search("post", ["titel" as "title"]), 'unknown column "titel"'],
      [() => base.search("post", ["views"]), "post.views is a integer column; only text and varchar columns are searchable"],
      [() => base.search("post", { title: "E" as "A" }), 'title has weight "E"'],
      [() => base.search("post", ["title"], { language: "klingon" as "english" }), 'unknown language "klingon"'],
      [() => base.search("post", []), "needs at least one column"],
      [() => base.search("post", ["rank"]), 'a column named "rank" cannot be searchable'],
    ];
    for (const [call, message] of cases) {
      const error = errorOf(call);
      expect(error).toBeInstanceOf(SchemaError);
      expect(error.code).toBe("SCHEMA_SEARCH_INVALID");
      expect(error.message).toContain(message);
    }
  });

  it("is re-checked at build: a later redeclaration may not make an indexed column non-text", () => {
    const error = errorOf(() =>
      schema("1")
        .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
        .search("post", ["title"])
        .table("post", (t) => ({ title: t.integer() }))
        .build(),
    );
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain("only text and varchar columns are searchable");
  });

  it("is diffed per version: created, rebuilt when changed, dropped when removed, carried by extend", () => {
    const steps = planMigrations([v1, v2, v3, v4, v5]);
    expect(steps.map((step) => step.search.map(({ drop, create }) => ({ drop, create: create?.search })))).toEqual([
      [],
      [{ drop: false, create: { columns: { title: "A", body: "A" }, language: "simple" } }],
      [{ drop: true, create: { columns: { title: "B", body: "A" }, language: "english" } }],
      [{ drop: true, create: undefined }],
      [{ drop: false, create: { columns: { summary: "A" }, language: "simple" } }],
    ]);
    expect(schema("6").extend(v5).build().tables.post!.search).toEqual(v5.tables.post!.search);
  });

  it("is part of a version's recorded definition, so changing an applied version's index is drift", async () => {
    expect(definitionOf(v2).post!["~search"]).toBe("simple title:A body:A");
    expect(definitionOf(v1).post!["~search"]).toBeUndefined();
    const rewritten = schema("2").extend(v1).search("post", ["title"]).build();
    expect(await checksumOf(definitionOf(rewritten))).not.toBe(await checksumOf(definitionOf(v2)));
  });

  it("refuses, at build, a PostgreSQL-only language on SQLite", () => {
    const german = schema("1").table("doc", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).search("doc", ["text"], { language: "german" }).build();
    expect(() => createMigrationProvider("postgres", [german])).not.toThrow();
    expect(errorOf(() => createMigrationProvider("sqlite", [german])).message).toContain('language "german" is PostgreSQL only');
  });
});

describe.each(families())("full-text index migrations on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family);
  });
  afterAll(async () => {
    await h?.close();
  });

  const found = async (words: string) => (await h.db.query.post!.findMany({ search: words, orderBy: [{ id: "asc" }] })).map((row: any) => row.id);
  const ranked = async (words: string) => (await h.db.query.post!.findMany({ search: words })).map((row: any) => row.id);

  it("indexes the rows a table already holds, follows weight and language changes, and drops the index", async () => {
    await h.migrate([v1]);
    await h.db.insertInto("post").values([
      { id: "a", title: "running shoes", body: "for the trail" },
      { id: "b", title: "trail maps", body: "running water" },
      { id: "c", title: "cooking", body: null },
    ]).execute();
    await expect(h.db.query.post!.findMany({ search: "running" })).rejects.toThrow(/no full-text index/);

    await h.migrate([v1, v2]);
    expect(await found("running trail")).toEqual(["a", "b"]);
    expect(await found("runs")).toEqual([]);
    await h.db.insertInto("post").values({ id: "d", title: "after the index", body: "running" }).execute();
    expect(await found("running")).toEqual(["a", "b", "d"]);
    expect(await h.db.query.post!.count({ search: "running", where: { id: { not: "a" } } })).toBe(2);

    // Body now outranks title, and English stems "runs" to "run".
    await h.migrate([v1, v2, v3]);
    expect(await found("runs")).toEqual(["a", "b", "d"]);
    expect((await ranked("water"))).toEqual(["b"]);
    expect((await ranked("trail")).slice(0, 2)).toEqual(["a", "b"]);

    await h.migrate([v1, v2, v3, v4]);
    await expect(h.db.query.post!.findMany({ search: "running" })).rejects.toThrow(/no full-text index/);
    const leftovers = h.kind === "postgres"
      ? await h.kysely.selectFrom("information_schema.columns" as any).select("column_name").where("table_name", "=", "post").where("column_name", "=", "__search").execute()
      : await h.kysely.selectFrom("sqlite_master" as any).select("name").where("name", "like", "post\\_\\_search%" as any).execute();
    expect(leftovers).toEqual([]);

    await h.migrate([v1, v2, v3, v4, v5]);
    await h.db.updateTable("post").set({ summary: "a short summary" }).where("id", "=", "c").execute();
    expect(await found("summary")).toEqual(["c"]);
    expect(await found("running")).toEqual([]);
    // The row's update moved nothing else: updates outside the indexed columns keep it findable.
    await h.db.updateTable("post").set({ views: 9 }).where("id", "=", "c").execute();
    expect(await found("short")).toEqual(["c"]);
  });
});
