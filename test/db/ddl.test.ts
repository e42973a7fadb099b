import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DdlError, createTablesStatements } from "../../kernel/db/ddl.js";
import type { SchemaModel, TableModel } from "../../kernel/schema/model.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { families } from "../support/databases.js";
import { openHarness, type Harness } from "./harness.js";

// Declared child-first on purpose: creation must follow foreign keys, not declaration order.
const model = schema("1")
  .table("child", (t) => ({
    id: t.serial().primaryKey(),
    restrictId: t.integer().nullable().references("parent", "id", { onDelete: "restrict" }),
    cascadeId: t.integer().nullable().references("parent", "id", { onDelete: "cascade" }),
    setNullId: t.integer().nullable().references("parent", "id", { onDelete: "set null" }),
    plainId: t.integer().nullable().references("parent", "id"),
  }))
  .table("parent", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .table("thing", (t) => ({
    id: t.serial().primaryKey(),
    slug: t.varchar().unique().index(),
    label: t.text().index(),
    quote: t.text().default("it's"),
    count: t.integer().default(7),
    ok: t.boolean().default(true),
    price: t.decimal().default("1.50"),
    big: t.bigint().default("9007199254740993"),
    ratio: t.real().default(0.5),
    day: t.date().default("2024-02-29"),
    at: t.timestamp().default("2024-01-02T03:04:05.678Z"),
    meta: t.jsonb().default('{"a":[1,"it\'s"]}'),
    status: t.text().enum(["draft", "published"]).default("draft"),
    roles: t.text().enum(["admin", "editor", "viewer"], { multiple: true }).default(""),
    ...timestamps(t),
  }))
  // Referenced through a unique column that is not the key, declared after its referrer.
  .table("order", (t) => ({ id: t.serial().primaryKey(), voucher: t.text().nullable().references("voucher", "code") }))
  .table("voucher", (t) => ({ id: t.serial().primaryKey(), code: t.text().unique() }))
  .table("category", (t) => ({
    id: t.serial().primaryKey(),
    parentId: t.integer().nullable().references("category", "id", { onDelete: "cascade" }),
  }))
  .build();

const table = (name: string, columns: TableModel["columns"]): TableModel => ({ name, columns });
const column = (type: TableModel["columns"][string]["type"], extra: Partial<TableModel["columns"][string]> = {}) => ({
  type,
  nullable: false,
  primaryKey: false,
  unique: false,
  index: false,
  ...extra,
});

describe("DDL text", () => {
  it("creates referenced tables first and spells every column type per family", () => {
    const pg = createTablesStatements("postgres", Object.values(model.tables));
    const lite = createTablesStatements("sqlite", Object.values(model.tables));
    const order = (statements: string[]) => statements.filter((s) => s.startsWith("create table")).map((s) => /create table "(\w+)"/.exec(s)![1]);
    expect(order(pg)).toEqual(["parent", "child", "thing", "voucher", "order", "category"]);
    expect(order(lite)).toEqual(["parent", "child", "thing", "voucher", "order", "category"]);
    const thingPg = pg.find((s) => s.startsWith('create table "thing"'))!;
    const thingLite = lite.find((s) => s.startsWith('create table "thing"'))!;
    expect(thingPg).toContain('"id" serial primary key not null');
    expect(thingLite).toContain('"id" integer primary key autoincrement not null');
    expect(thingPg).toContain(`"quote" text not null default 'it''s'`);
    expect(thingPg).toContain('"ok" boolean not null default true');
    expect(thingLite).toContain('"ok" integer not null default 1 constraint "thing_ok_check" check ("ok" in (0, 1))');
    expect(thingPg).toContain(`"price" numeric not null default '1.50'`);
    expect(thingPg).toContain('"big" bigint not null default 9007199254740993');
    expect(thingPg).toContain('"ratio" double precision not null default 0.5');
    expect(thingPg).toContain(`"at" timestamptz(3) not null default '2024-01-02T03:04:05.678Z'`);
    expect(thingPg).toContain(`"meta" jsonb not null default '{"a":[1,"it''s"]}'`);
    expect(thingLite).toContain(`constraint "thing_meta_check" check (json_valid("meta"))`);
    expect(thingPg).toContain(`constraint "thing_status_check" check ("status" in ('draft', 'published'))`);
    expect(thingPg).toContain('"createdAt" timestamptz(3) not null default CURRENT_TIMESTAMP');
    expect(thingLite).toContain(`"createdAt" text not null default (strftime('%Y-%m-%dT%H:%M:%fZ','now'))`);
    const child = pg.find((s) => s.startsWith('create table "child"'))!;
    expect(child).toContain('constraint "child_restrictId_fkey" references "parent" ("id") on delete restrict');
    expect(pg).toContain('create unique index "thing_slug_key" on "thing" ("slug")');
    expect(pg).toContain('create index "thing_label_idx" on "thing" ("label")');
    // `.index()` is moot on a unique column.
    expect(pg).not.toContain('create index "thing_slug_idx" on "thing" ("slug")');
  });

  it("breaks a foreign-key cycle with a later constraint on postgres and keeps it inline on sqlite", () => {
    const a = table("a", { id: column("serial", { primaryKey: true }), bId: column("integer", { nullable: true, references: { table: "b", column: "id" } }) });
    const b = table("b", { id: column("serial", { primaryKey: true }), aId: column("integer", { nullable: true, references: { table: "a", column: "id" } }) });
    const pg = createTablesStatements("postgres", [a, b]);
    expect(pg.filter((s) => s.startsWith("create table")).map((s) => s.split(" ")[2])).toEqual(['"b"', '"a"']);
    expect(pg).toContain('alter table "b" add constraint "b_aId_fkey" foreign key ("aId") references "a" ("id")');
    expect(createTablesStatements("sqlite", [a, b]).join("\n")).not.toContain("alter table");
  });

  it("refuses DDL it cannot express", () => {
    const bytes = table("x", { id: column("integer", { primaryKey: true }), b: column("bytes", { default: { kind: "value", value: "00" } }) });
    expect(() => createTablesStatements("postgres", [bytes])).toThrow(DdlError);
    const serial = table("y", { id: column("integer", { primaryKey: true }), n: column("serial") });
    expect(() => createTablesStatements("sqlite", [serial])).toThrow(/serial column must be the sole primary key on sqlite/);
  });
});

describe.each(families())("DDL on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family, [model]);
  });
  afterAll(() => h?.close());

  const parent = async (name: string) => (await h.db.insertInto("parent").values({ name }).returning("id").executeTakeFirstOrThrow()).id as number;

  it("applies every literal and SQL default", async () => {
    const before = Date.now();
    await h.db.insertInto("thing").values({ slug: "defaults", label: "l" }).execute();
    const row = (await h.db.query.thing.findFirst({ where: { slug: "defaults" } }))!;
    expect(row).toMatchObject({
      quote: "it's",
      count: 7,
      ok: true,
      price: "1.50",
      big: "9007199254740993",
      ratio: 0.5,
      day: new Date("2024-02-29T00:00:00Z"),
      at: new Date("2024-01-02T03:04:05.678Z"),
      meta: { a: [1, "it's"] },
      status: "draft",
      roles: "",
    });
    expect(row.createdAt).toBeInstanceOf(Date);
    expect(Math.abs((row.createdAt as Date).getTime() - before)).toBeLessThan(60_000);
    if (h.kind === "sqlite") {
      // Stored as ISO-8601 UTC text, so text order is time order next to values Trellis writes.
      const raw = await sql<{ createdAt: string }>`select "createdAt" from thing where slug = 'defaults'`.execute(h.kysely);
      expect(raw.rows[0]!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it("enforces unique constraints", async () => {
    await h.db.insertInto("thing").values({ slug: "same", label: "a" }).execute();
    await expect(h.db.insertInto("thing").values({ slug: "same", label: "b" }).execute()).rejects.toThrow();
  });

  it("rejects values outside an enum through its CHECK constraint", async () => {
    await expect(h.db.insertInto("thing").values({ slug: "e1", label: "l", status: "archived" }).execute()).rejects.toThrow();
    await h.db.insertInto("thing").values({ slug: "e2", label: "l", status: "published" }).execute();
  });

  it("accepts only sets of declared members in a multiple enum", async () => {
    let n = 0;
    const insert = (roles: string) => h.db.insertInto("thing").values({ slug: `m${n++}`, label: "l", roles }).execute();
    for (const ok of ["admin", "admin,viewer", "viewer,admin,editor", "admin,admin", ""]) await expect(insert(ok)).resolves.toBeDefined();
    for (const bad of ["root", "admin,root", "admin,", ",admin", "admin,,viewer", "Admin", "admin, viewer", "adminviewer"]) {
      await expect(insert(bad), bad).rejects.toThrow();
    }
  });

  it("creates the {table}_{column}_idx and {table}_{column}_key indexes", async () => {
    const query =
      h.kind === "postgres"
        ? sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'thing'`
        : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'thing'`;
    const names = (await query.execute(h.kysely)).rows.map((row) => row.name);
    expect(names).toEqual(expect.arrayContaining(["thing_label_idx", "thing_slug_key"]));
    expect(names).not.toContain("thing_slug_idx");
  });

  it("deletes with restrict, cascade, set null and no action", async () => {
    const restricted = await parent("restricted");
    await h.db.insertInto("child").values({ restrictId: restricted }).execute();
    await expect(h.db.deleteFrom("parent").where("id", "=", restricted).execute()).rejects.toThrow();

    const plain = await parent("plain");
    await h.db.insertInto("child").values({ plainId: plain }).execute();
    await expect(h.db.deleteFrom("parent").where("id", "=", plain).execute()).rejects.toThrow();

    const cascaded = await parent("cascaded");
    await h.db.insertInto("child").values({ cascadeId: cascaded }).execute();
    await h.db.deleteFrom("parent").where("id", "=", cascaded).execute();
    expect(await h.db.query.child.count({ where: { cascadeId: cascaded } })).toBe(0);

    const nulled = await parent("nulled");
    const { id } = await h.db.insertInto("child").values({ setNullId: nulled }).returning("id").executeTakeFirstOrThrow();
    await h.db.deleteFrom("parent").where("id", "=", nulled).execute();
    expect((await h.db.query.child.findFirst({ where: { id } }))!.setNullId).toBeNull();
  });

  it("references a unique column that is not the primary key", async () => {
    await h.db.insertInto("voucher").values({ code: "SAVE10" }).execute();
    await h.db.insertInto("order").values({ voucher: "SAVE10" }).execute();
    await expect(h.db.insertInto("order").values({ voucher: "NOPE" }).execute()).rejects.toThrow();
  });

  it("refuses a reference to a missing row and allows self-references", async () => {
    await expect(h.db.insertInto("child").values({ plainId: 999_999 }).execute()).rejects.toThrow();
    const root = await h.db.insertInto("category").values({ parentId: null }).returning("id").executeTakeFirstOrThrow();
    await h.db.insertInto("category").values({ parentId: root.id }).execute();
    await h.db.deleteFrom("category").where("id", "=", root.id).execute();
    expect(await h.db.query.category.count()).toBe(0);
  });
});

export type { SchemaModel };
