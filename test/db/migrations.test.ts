import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MigrationPlanError, planMigrations, validateHistory } from "../../kernel/db/diff.js";
import { createMigrator, migrationName } from "../../kernel/db/migrations.js";
import { schema } from "../../kernel/schema/index.js";
import type { SchemaModel } from "../../kernel/schema/model.js";
import { families } from "../support/databases.js";
import { openHarness, type Harness } from "./harness.js";

const v1 = schema("1")
  .table("user", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.integer().references("user", "id") }))
  .table("scratch", (t) => ({ id: t.serial().primaryKey() }))
  .build();

// v2: a new table, defaulted and nullable columns (one unique, one with a foreign key), a new
// index on an existing column; `scratch` is dropped from the schema (and stays in the database).
const v2 = schema("2")
  .table("user", (t) => ({ id: t.serial().primaryKey(), name: t.text().index(), bio: t.text().nullable() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    authorId: t.integer().references("user", "id"),
    views: t.integer().default(0),
    slug: t.varchar().nullable().unique(),
    editorId: t.integer().nullable().references("user", "id", { onDelete: "set null" }),
  }))
  .table("comment", (t) => ({ id: t.serial().primaryKey(), postId: t.integer().references("post", "id", { onDelete: "cascade" }), body: t.text() }))
  .relation("post", (rel) => ({ comments: rel.hasMany("comment", { from: "id", to: "postId" }) }))
  .build();

// v3: a many-to-many through a new pivot, the unique on post.slug swapped for a plain index,
// `scratch` back in the schema (no CREATE: it never left the database).
const v3 = schema("3 beta/1")
  .table("user", (t) => ({ id: t.serial().primaryKey(), name: t.text().index(), bio: t.text().nullable() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    authorId: t.integer().references("user", "id"),
    views: t.integer().default(0),
    slug: t.varchar().nullable().index(),
    editorId: t.integer().nullable().references("user", "id", { onDelete: "set null" }),
    flagged: t.boolean().default(false),
  }))
  .table("comment", (t) => ({ id: t.serial().primaryKey(), postId: t.integer().references("post", "id", { onDelete: "cascade" }), body: t.text() }))
  .table("tag", (t) => ({ id: t.serial().primaryKey(), name: t.text().unique() }))
  .table("post_tag", (t) => ({
    id: t.serial().primaryKey(),
    postId: t.integer().references("post", "id", { onDelete: "cascade" }),
    tagId: t.integer().references("tag", "id", { onDelete: "cascade" }),
  }))
  .table("scratch", (t) => ({ id: t.serial().primaryKey() }))
  .relation("post", (rel) => ({
    comments: rel.hasMany("comment", { from: "id", to: "postId" }),
    tags: rel.manyToMany("tag", "post_tag", { from: "id", to: "id", pivotFrom: "postId", pivotTo: "tagId" }),
  }))
  .build();

const history = [v1, v2, v3];

describe("migration plan", () => {
  it("names steps by registration index and a sanitised version", () => {
    expect(migrationName(0, "1")).toBe("0001_1");
    expect(migrationName(2, "3 beta/1")).toBe("0003_3_beta_1");
    expect(migrationName(11, "2024-01.x")).toBe("0012_2024-01.x");
  });

  it("diffs each version against what the versions before it left", () => {
    const [first, second, third] = planMigrations(history);
    expect(first!.createTables.map((t) => t.name)).toEqual(["user", "post", "scratch"]);
    expect(second!.createTables.map((t) => t.name)).toEqual(["comment"]);
    expect(second!.addColumns.map((c) => `${c.table}.${c.name}`)).toEqual(["user.bio", "post.views", "post.slug", "post.editorId"]);
    expect(second!.createIndexes).toEqual([{ table: "user", column: "name", kind: "index" }]);
    expect(third!.createTables.map((t) => t.name)).toEqual(["tag", "post_tag"]);
    expect(third!.dropIndexes).toEqual(["post_slug_key"]);
    expect(third!.createIndexes).toEqual([{ table: "post", column: "slug", kind: "index" }]);
  });

  const base = schema("1").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), note: t.text().nullable(), kind: t.text().enum(["a", "b"]) })).build();
  const refused: [string, SchemaModel, string][] = [
    [
      "a changed type",
      schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.integer(), note: t.text().nullable(), kind: t.text().enum(["a", "b"]) })).build(),
      'Cannot migrate post.title from version "1" to "2": its type changed from text to integer',
    ],
    [
      "a removed column",
      schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), note: t.text().nullable(), kind: t.text().enum(["a", "b"]) })).build(),
      'Cannot migrate post.title from version "1" to "2": the column was removed',
    ],
    [
      "a new NOT NULL column without default",
      schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), note: t.text().nullable(), kind: t.text().enum(["a", "b"]), body: t.text() })).build(),
      'Cannot migrate post.body from version "1" to "2": it is added as NOT NULL without a default',
    ],
    [
      "nullable to NOT NULL",
      schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), note: t.text(), kind: t.text().enum(["a", "b"]) })).build(),
      'Cannot migrate post.note from version "1" to "2": it changed from nullable to NOT NULL',
    ],
    [
      "a changed enum",
      schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), note: t.text().nullable(), kind: t.text().enum(["a", "b", "c"]) })).build(),
      'Cannot migrate post.kind from version "1" to "2": its enum values changed',
    ],
  ];
  it.each(refused)("refuses %s, naming table, column and both versions", (_, next, message) => {
    expect(() => validateHistory([base, next])).toThrow(MigrationPlanError);
    expect(() => validateHistory([base, next])).toThrow(message);
  });

  it("lists every refused change at once", () => {
    const next = schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.integer(), kind: t.text().enum(["a", "b"]) })).build();
    try {
      validateHistory([base, next]);
      expect.unreachable();
    } catch (error) {
      expect((error as MigrationPlanError).problems).toHaveLength(2);
      expect((error as MigrationPlanError).message).toMatch(/post\.note .*removed[\s\S]*|post\.title .*type changed/);
    }
  });

  it("throws when the migrator is created, before touching the database", () => {
    const next = schema("2").table("post", (t) => ({ id: t.serial().primaryKey(), kind: t.text().enum(["a", "b"]) })).build();
    expect(() => createMigrator(undefined as never, "sqlite", [base, next])).toThrow(MigrationPlanError);
  });
});

describe.each(families())("migrations on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family);
  });
  afterAll(() => h?.close());
  beforeEach(() => h.reset());

  const migrate = (models: SchemaModel[]) => h.migrator(models).migrateToLatest();
  const columns = async (table: string) => {
    const query =
      h.kind === "postgres"
        ? sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table} order by ordinal_position`
        : sql<{ name: string }>`select name from pragma_table_info(${table})`;
    return (await query.execute(h.kysely)).rows.map((r) => r.name);
  };
  const indexes = async (table: string) => {
    const query =
      h.kind === "postgres"
        ? sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = ${table}`
        : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`;
    return (await query.execute(h.kysely)).rows.map((r) => r.name).sort();
  };
  const tables = async () => {
    const query =
      h.kind === "postgres"
        ? sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`
        : sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`;
    return (await query.execute(h.kysely)).rows.map((r) => r.name).filter((n) => !n.startsWith("kysely_") && n !== "trellis_migration").sort();
  };
  const expectLatest = async () => {
    expect(await tables()).toEqual(["comment", "post", "post_tag", "scratch", "tag", "user"]);
    expect(await columns("post")).toEqual(["id", "title", "authorId", "views", "slug", "editorId", "flagged"]);
    expect(await indexes("post")).toEqual(expect.arrayContaining(["post_slug_idx"]));
    expect(await indexes("post")).not.toContain("post_slug_key");
    expect(await indexes("user")).toContain("user_name_idx");
    expect(await indexes("tag")).toContain("tag_name_key");
  };

  it("migrates a three-version history from empty, and again applies nothing", async () => {
    const first = await migrate(history);
    expect(first.error).toBeUndefined();
    expect(first.results?.map((r) => [r.migrationName, r.status])).toEqual([
      ["0001_1", "Success"],
      ["0002_2", "Success"],
      ["0003_3_beta_1", "Success"],
    ]);
    await expectLatest();
    const again = await migrate(history);
    expect(again.error).toBeUndefined();
    expect(again.results).toEqual([]);
  });

  it("migrates from each intermediate version, keeping rows", async () => {
    expect((await migrate([v1])).error).toBeUndefined();
    await h.kysely.insertInto("user").values({ name: "ann" }).execute();
    await h.kysely.insertInto("post").values({ title: "kept", authorId: 1 }).execute();
    await h.kysely.insertInto("scratch").values({ id: 7 }).execute();

    const second = await migrate([v1, v2]);
    expect(second.results?.map((r) => r.migrationName)).toEqual(["0002_2"]);
    const post = await h.kysely.selectFrom("post").selectAll().executeTakeFirstOrThrow();
    // The existing row got the new column's default; the nullable ones are NULL.
    expect(post).toMatchObject({ title: "kept", views: 0, slug: null, editorId: null });
    // A table gone from the schema stays in the database, rows and all.
    expect(await tables()).toContain("scratch");

    const third = await migrate(history);
    expect(third.results?.map((r) => r.migrationName)).toEqual(["0003_3_beta_1"]);
    await expectLatest();
    expect(await h.kysely.selectFrom("scratch").select("id").execute()).toEqual([{ id: 7 }]);
    const flagged = await h.kysely.selectFrom("post").select("flagged").executeTakeFirstOrThrow();
    expect(Boolean(flagged.flagged)).toBe(false);
  });

  it("rolls back every pending step when one fails, and resolves { error }", async () => {
    expect((await migrate([v1])).error).toBeUndefined();
    await h.kysely.insertInto("user").values({ name: "ann" }).execute();
    const broken = schema("4")
      .extend(v3)
      .table("broken", (t) => ({ id: t.serial().primaryKey(), value: t.text().defaultSql("this is not sql") }))
      .build();
    const result = await migrate([v1, v2, v3, broken]);
    expect(result.error).toBeDefined();
    expect(result.results?.find((r) => r.status === "Error")?.migrationName).toBe("0004_4");
    // Steps 2 and 3 ran in the same transaction and were rolled back with step 4.
    expect(await tables()).toEqual(["post", "scratch", "user"]);
    expect(await columns("post")).toEqual(["id", "title", "authorId"]);
    expect(await h.kysely.selectFrom("user").select("name").execute()).toEqual([{ name: "ann" }]);
    const done = await h.kysely.selectFrom("kysely_migration").select("name").execute();
    expect(done.map((r) => r.name)).toEqual(["0001_1"]);
    // Fixing the history lets it finish.
    expect((await migrate(history)).error).toBeUndefined();
    await expectLatest();
  });

  it("fails a step that adds a unique constraint over duplicate values, and rolls it back", async () => {
    const before = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), code: t.text() })).build();
    const after = schema("2").table("item", (t) => ({ id: t.serial().primaryKey(), code: t.text().unique() })).build();
    expect((await migrate([before])).error).toBeUndefined();
    await h.kysely.insertInto("item").values([{ code: "x" }, { code: "x" }]).execute();
    const result = await migrate([before, after]);
    expect(result.error).toBeDefined();
    expect(await indexes("item")).not.toContain("item_code_key");
    await h.kysely.deleteFrom("item").where("id", "=", 2).execute();
    expect((await migrate([before, after])).error).toBeUndefined();
    expect(await indexes("item")).toContain("item_code_key");
  });
});
