import { Kysely, type Insertable } from "kysely";
import { describe, expectTypeOf, test } from "vitest";
import {
  schema,
  timestamps,
  type InferDB,
  type InsertOf,
  type KyselyDatabase,
  type PrimaryKeyOf,
  type RelationsOf,
  type RowOf,
  type SchemaResult,
  type TableName,
} from "../../kernel/schema/index.js";

const v1 = schema("1")
  .auth({ roles: ["admin", "editor"] })
  .table("user", (t) => ({ bio: t.text().nullable() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.varchar(),
    status: t.text().enum(["draft", "published"]).default("draft"),
    tags: t.text().enum(["a", "b", "c"], { multiple: true }).nullable(),
    authorId: t.text().references("user", "id", { onDelete: "cascade" }).index(),
    views: t.integer().default(0),
    price: t.decimal().nullable(),
    ...timestamps(t),
  }))
  .relation("post", (rel) => ({ author: rel.belongsTo("user", { from: "authorId", to: "id" }) }))
  .relation("user", (rel) => ({ posts: rel.hasMany("post", { from: "id", to: "authorId" }) }))
  .build();

type DB = InferDB<typeof v1>;

describe("InferDB", () => {
  test("row types are exact", () => {
    expectTypeOf<DB["post"]>().toEqualTypeOf<{
      id: number;
      title: string;
      status: "draft" | "published";
      tags: string | null;
      authorId: string;
      views: number;
      price: string | null;
      createdAt: Date;
      updatedAt: Date;
    }>();
  });

  test("every column type maps to its select type", () => {
    const s = schema("types")
      .table("all", (t) => ({
        a: t.serial(),
        b: t.text(),
        c: t.varchar(),
        d: t.integer(),
        e: t.boolean(),
        f: t.timestamp(),
        g: t.bigint(),
        h: t.decimal(),
        i: t.real(),
        j: t.date(),
        k: t.jsonb(),
        l: t.uuid(),
        m: t.bytes(),
        n: t.uuid().nullable().unique(),
      }))
      .build();
    expectTypeOf<InferDB<typeof s>["all"]>().toEqualTypeOf<{
      a: number;
      b: string;
      c: string;
      d: number;
      e: boolean;
      f: Date;
      g: string;
      h: string;
      i: number;
      j: Date;
      k: unknown;
      l: string;
      m: Uint8Array;
      n: string | null;
    }>();
  });

  test("auth tables keep their core columns and gain re-declared ones", () => {
    expectTypeOf<DB["user"]>().toEqualTypeOf<{
      id: string;
      name: string;
      email: string;
      emailVerified: boolean;
      image: string | null;
      createdAt: Date;
      updatedAt: Date;
      role: string | null;
      banned: boolean | null;
      banReason: string | null;
      banExpires: Date | null;
      bio: string | null;
    }>();
    expectTypeOf<DB["session"]["userId"]>().toEqualTypeOf<string>();
    expectTypeOf<DB["session"]["impersonatedBy"]>().toEqualTypeOf<string | null>();
    expectTypeOf<DB>().not.toHaveProperty("apikey");
    const withKeys = schema("k").auth({ apiKeys: true }).build();
    expectTypeOf<InferDB<typeof withKeys>["apikey"]["referenceId"]>().toEqualTypeOf<string>();
    expectTypeOf<InferDB<typeof withKeys>["apikey"]["remaining"]>().toEqualTypeOf<number | null>();
  });

  test("a re-declared column wins, at type level too", () => {
    const s = schema("r")
      .table("a", (t) => ({ x: t.text(), y: t.integer() }))
      .table("a", (t) => ({ y: t.text().nullable(), z: t.boolean() }))
      .build();
    expectTypeOf<InferDB<typeof s>["a"]>().toEqualTypeOf<{ x: string; y: string | null; z: boolean }>();
  });

  test("extend merges deeply and the builder wins", () => {
    const v2 = schema("2")
      .table("post", (t) => ({ title: t.text().nullable(), summary: t.text() }))
      .extend(v1)
      .table("tag", (t) => ({ id: t.serial().primaryKey() }))
      .build();
    type DB2 = InferDB<typeof v2>;
    expectTypeOf<DB2["post"]["title"]>().toEqualTypeOf<string | null>();
    expectTypeOf<DB2["post"]["summary"]>().toEqualTypeOf<string>();
    expectTypeOf<DB2["post"]["status"]>().toEqualTypeOf<"draft" | "published">();
    expectTypeOf<DB2["user"]["bio"]>().toEqualTypeOf<string | null>();
    expectTypeOf<TableName<typeof v2>>().toEqualTypeOf<"user" | "session" | "account" | "verification" | "post" | "tag">();
    expectTypeOf<keyof RelationsOf<typeof v2, "user">>().toEqualTypeOf<"sessions" | "accounts" | "posts">();
  });
});

describe("files", () => {
  const f = schema("f")
    .auth()
    .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
    .table("doc", (t) => ({ id: t.uuid().primaryKey() }))
    .files({ attachTo: ["post", "doc"] })
    .build();
  type F = InferDB<typeof f>;

  test("file table and pivots", () => {
    expectTypeOf<F["file"]>().toEqualTypeOf<{
      id: string;
      key: string;
      name: string;
      type: string;
      size: number;
      userId: string | null;
      createdAt: Date;
      updatedAt: Date;
    }>();
    expectTypeOf<F["post_file"]>().toEqualTypeOf<{
      id: number;
      fileId: string;
      entityId: number;
      role: string | null;
      position: number;
    }>();
    expectTypeOf<F["doc_file"]["entityId"]>().toEqualTypeOf<string>();
    expectTypeOf<InsertOf<typeof f, "post_file">>().toEqualTypeOf<{
      fileId: string;
      entityId: number;
      role?: string | null;
      position?: number;
    }>();
  });

  test("relations both ways", () => {
    expectTypeOf<RelationsOf<typeof f, "post">>().toEqualTypeOf<{ files: { kind: "manyToMany"; target: "file" } }>();
    expectTypeOf<RelationsOf<typeof f, "file">["doc"]>().toEqualTypeOf<{ kind: "manyToMany"; target: "doc" }>();
    expectTypeOf<RelationsOf<typeof f, "file">["user"]>().toEqualTypeOf<{ kind: "belongsTo"; target: "user" }>();
    expectTypeOf<RelationsOf<typeof f, "user">["files"]>().toEqualTypeOf<{ kind: "hasMany"; target: "file" }>();
  });

  test("a files schema is still a plain SchemaResult", () => {
    const take = (s: SchemaResult) => s.version;
    expectTypeOf(take(f)).toEqualTypeOf<string>();
    expectTypeOf(take(v1)).toEqualTypeOf<string>();
  });

  test("attachTo sees tables brought in by extend", () => {
    const v2 = schema("2").extend(v1).files({ attachTo: ["post"] }).build();
    expectTypeOf<InferDB<typeof v2>["post_file"]["entityId"]>().toEqualTypeOf<number>();
  });

  test("owner: false omits file.userId", () => {
    const s = schema("o").files({ owner: false }).build();
    expectTypeOf<InferDB<typeof s>["file"]>().not.toHaveProperty("userId");
  });

  test("attachTo only accepts tables declared so far", () => {
    // @ts-expect-error "comment" is not a table of this builder
    schema("x").table("post", (t) => ({ id: t.serial().primaryKey() })).files({ owner: false, attachTo: ["comment"] });
  });
});

describe("helpers", () => {
  test("RowOf, InsertOf, PrimaryKeyOf, RelationsOf", () => {
    expectTypeOf<RowOf<typeof v1, "post">>().toEqualTypeOf<DB["post"]>();
    expectTypeOf<InsertOf<typeof v1, "post">>().toEqualTypeOf<{
      title: string;
      authorId: string;
      status?: "draft" | "published";
      tags?: string | null;
      views?: number;
      price?: string | null;
      createdAt?: Date;
      updatedAt?: Date;
    }>();
    expectTypeOf<PrimaryKeyOf<typeof v1, "post">>().toEqualTypeOf<"id">();
    expectTypeOf<RelationsOf<typeof v1, "post">>().toEqualTypeOf<{ author: { kind: "belongsTo"; target: "user" } }>();
    expectTypeOf<RelationsOf<typeof v1, "user">["posts"]>().toEqualTypeOf<{ kind: "hasMany"; target: "post" }>();
    expectTypeOf<RelationsOf<typeof v1, "verification">>().toEqualTypeOf<{}>();
  });

  test("a built schema is a SchemaResult and a SchemaModel", () => {
    expectTypeOf(v1).toMatchTypeOf<SchemaResult>();
    expectTypeOf(v1.tables.post.columns.id.type).toEqualTypeOf<
      "serial" | "text" | "varchar" | "integer" | "boolean" | "timestamp" | "bigint" | "decimal" | "real" | "date" | "jsonb" | "uuid" | "bytes" | "vector"
    >();
  });
});

describe("column modifiers", () => {
  test("defaults must match the column type", () => {
    schema("d").table("a", (t) => ({
      a: t.text().default("x"),
      b: t.integer().default(1),
      c: t.boolean().default(true),
      d: t.timestamp().default("2024-01-01T00:00:00Z"),
      e: t.decimal().default("1.50"),
      f: t.text().enum(["x", "y"]).default("y"),
      // @ts-expect-error a number is not a text default
      g: t.text().default(1),
      // @ts-expect-error "z" is not one of the enum values
      h: t.text().enum(["x", "y"]).default("z"),
      // @ts-expect-error bytes take a SQL default only
      i: t.bytes().default("x"),
      // @ts-expect-error a string is not a boolean default
      j: t.boolean().default("true"),
    }));
  });

  test("enum only on text and varchar", () => {
    schema("e").table("a", (t) => ({
      a: t.varchar().enum(["x"]),
      // @ts-expect-error integers cannot be enums
      b: t.integer().enum(["x"]),
    }));
  });

  test("relation columns are checked against both tables", () => {
    schema("r")
      .table("a", (t) => ({ id: t.serial().primaryKey() }))
      .table("b", (t) => ({ id: t.serial().primaryKey(), aId: t.integer() }))
      // @ts-expect-error "aid" is not a column of b
      .relation("a", (rel) => ({ bs: rel.hasMany("b", { from: "id", to: "aid" }) }));
    schema("r2")
      .table("a", (t) => ({ id: t.serial().primaryKey() }))
      // @ts-expect-error "c" is not a table
      .relation("a", (rel) => ({ cs: rel.hasMany("c", { from: "id", to: "id" }) }));
  });
});

describe("KyselyDatabase", () => {
  const db = new Kysely<KyselyDatabase<typeof v1>>({} as never);

  test("selecting yields the InferDB row", () => {
    const query = db.selectFrom("post").selectAll();
    type Selected = Awaited<ReturnType<typeof query.executeTakeFirstOrThrow>>;
    expectTypeOf<Selected>().toEqualTypeOf<DB["post"]>();
  });

  test("serial, defaulted and nullable columns are optional on insert", () => {
    db.insertInto("post").values({ title: "t", authorId: "u" });
    db.insertInto("user").values({ id: "u", name: "n", email: "e" });
    // @ts-expect-error title is required
    db.insertInto("post").values({ authorId: "u" });
    expectTypeOf<keyof Insertable<KyselyDatabase<typeof v1>["post"]>>().toEqualTypeOf<
      "id" | "title" | "status" | "tags" | "authorId" | "views" | "price" | "createdAt" | "updatedAt"
    >();
  });
});
