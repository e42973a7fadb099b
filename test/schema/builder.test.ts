import { apiKey } from "@better-auth/api-key";
import { getAuthTables } from "better-auth/db";
import { admin } from "better-auth/plugins";
import { describe, expect, test } from "vitest";
import { SchemaError } from "../../kernel/schema/errors.js";
import { COLUMN_TYPES, type ColumnModel, type ColumnType, type SchemaModel } from "../../kernel/schema/model.js";
import { parseSet, schema, timestamps, toSet } from "../../kernel/schema/index.js";

const plain = (type: ColumnType, extra: Partial<ColumnModel> = {}): ColumnModel => ({
  type,
  nullable: false,
  primaryKey: false,
  unique: false,
  index: false,
  ...extra,
});

const columnsOf = (model: SchemaModel, table: string) => model.tables[table].columns;

/** Runs a build that must fail and returns its error. */
function buildError(build: () => unknown): SchemaError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return error as SchemaError;
  }
  throw new Error("expected build() to throw");
}

describe("columns", () => {
  test("every column type stores a plain model", () => {
    const built = schema("1")
      .table("all", (t) => Object.fromEntries(COLUMN_TYPES.map((type) => [type, type === "vector" ? t.vector(3) : t[type]()])))
      .build();
    for (const type of COLUMN_TYPES) expect(columnsOf(built, "all")[type]).toEqual(plain(type, type === "vector" ? { vector: { dimensions: 3, distance: "cosine" } } : {}));
  });

  test("modifiers store their effect", () => {
    const built = schema("1")
      .table("a", (t) => ({
        id: t.uuid().primaryKey(),
        slug: t.text().unique(),
        rank: t.integer().index(),
        note: t.text().nullable(),
        views: t.integer().default(0),
        ok: t.boolean().default(false),
        at: t.timestamp().defaultSql("now()"),
        status: t.text().enum(["draft", "live"]).default("draft"),
        tags: t.varchar().enum(["x", "y"], { multiple: true }).default("x,y"),
        parent: t.uuid().nullable().references("a", "id", { onDelete: "set null", onUpdate: "cascade" }),
        owner: t.uuid().references("a", "id"),
      }))
      .build();
    const c = columnsOf(built, "a");
    expect(c.id).toEqual(plain("uuid", { primaryKey: true }));
    expect(c.slug).toEqual(plain("text", { unique: true }));
    expect(c.rank).toEqual(plain("integer", { index: true }));
    expect(c.note).toEqual(plain("text", { nullable: true }));
    expect(c.views.default).toEqual({ kind: "value", value: 0 });
    expect(c.ok.default).toEqual({ kind: "value", value: false });
    expect(c.at.default).toEqual({ kind: "sql", sql: "now()" });
    expect(c.status).toEqual(
      plain("text", { enum: { values: ["draft", "live"], multiple: false }, default: { kind: "value", value: "draft" } }),
    );
    expect(c.tags.enum).toEqual({ values: ["x", "y"], multiple: true });
    expect(c.parent.references).toEqual({ table: "a", column: "id", onDelete: "set null", onUpdate: "cascade" });
    expect(c.owner.references).toEqual({ table: "a", column: "id" });
    expect(Object.keys(c)).toEqual(["id", "slug", "rank", "note", "views", "ok", "at", "status", "tags", "parent", "owner"]);
  });

  test("modifiers return new columns and leave the original alone", () => {
    let base: any;
    schema("1").table("a", (t) => {
      base = t.text();
      const changed = base.nullable().unique().default("x");
      expect(changed).not.toBe(base);
      expect(base.model).toEqual(plain("text"));
      return { a: base };
    });
    expect(Object.isFrozen(base.model)).toBe(true);
  });

  test("enum values are copied, not shared with the caller", () => {
    const values = ["a", "b"] as const satisfies readonly string[];
    const mutable = [...values] as unknown as readonly ["a", "b"];
    const built = schema("1").table("a", (t) => ({ s: t.text().enum(mutable) })).build();
    (mutable as unknown as string[]).push("c");
    expect(columnsOf(built, "a").s.enum?.values).toEqual(["a", "b"]);
  });

  test("invalid modifiers throw at the call", () => {
    const table = (define: (t: any) => any) => () => schema("1").table("a", define);
    expect(table((t) => ({ a: t.text().default(1) }))).toThrow(/text column cannot default to 1/);
    expect(table((t) => ({ a: t.integer().default("1") }))).toThrow(/expected a number/);
    expect(table((t) => ({ a: t.bytes().default("x") }))).toThrow(/defaultSql/);
    expect(table((t) => ({ a: t.integer().enum(["x"]) }))).toThrow(/text and varchar/);
    expect(table((t) => ({ a: t.text().enum([]) }))).toThrow(/at least one value/);
    expect(table((t) => ({ a: t.text().enum(["a,b"], { multiple: true }) }))).toThrow(/contains a comma/);
    expect(table((t) => ({ a: t.text().enum(["x", "y"]).default("z") }))).toThrow(/not one of x, y/);
    expect(table((t) => ({ a: t.text().default("z").enum(["x"]) }))).toThrow(/not one of x/);
    expect(table((t) => ({ a: t.text().enum(["x"], { multiple: true }).default("x,q") }))).toThrow(/not one of/);
    expect(table((t) => ({ a: t.text().references("b", "id", { onDelete: "delete" }) }))).toThrow(/foreign-key action/);
    expect(table((t) => ({ a: t.text().defaultSql("") }))).toThrow(/SQL expression/);
    expect(table(() => ({ a: "text" }))).toThrow(/a\.a is not a column/);
    expect(table((t) => ({ "bad name": t.text() }))).toThrow(/Invalid column name "bad name"/);
    expect(() => schema("1").table("bad-name", (t) => ({ a: t.text() }))).toThrow(/Invalid table name/);
    expect(() => schema("")).toThrow(/non-empty/);
  });

  test("timestamps() gives createdAt and updatedAt defaulting to CURRENT_TIMESTAMP", () => {
    const built = schema("1").table("a", (t) => ({ ...timestamps(t) })).build();
    const stamp = plain("timestamp", { default: { kind: "sql", sql: "CURRENT_TIMESTAMP" } });
    expect(columnsOf(built, "a")).toEqual({ createdAt: stamp, updatedAt: stamp });
  });
});

describe("tables and relations", () => {
  test("re-declaring a table merges columns; the later declaration wins and keeps its place", () => {
    const built = schema("1")
      .table("a", (t) => ({ x: t.text(), y: t.integer() }))
      .table("a", (t) => ({ y: t.text().nullable(), z: t.boolean() }))
      .build();
    expect(Object.keys(columnsOf(built, "a"))).toEqual(["x", "y", "z"]);
    expect(columnsOf(built, "a").y).toEqual(plain("text", { nullable: true }));
  });

  test("builders are immutable, so a base can be branched", () => {
    const base = schema("1").table("a", (t) => ({ id: t.serial().primaryKey() }));
    const left = base.table("b", (t) => ({ x: t.text() })).build();
    const right = base.build();
    expect(Object.keys(left.tables)).toEqual(["a", "b"]);
    expect(Object.keys(right.tables)).toEqual(["a"]);
  });

  test("relations are stored by table and name, and merge per table", () => {
    const built = schema("1")
      .table("user", (t) => ({ id: t.text().primaryKey() }))
      .table("post", (t) => ({ id: t.serial().primaryKey(), authorId: t.text() }))
      .table("tag", (t) => ({ id: t.serial().primaryKey() }))
      .table("post_tag", (t) => ({ postId: t.integer(), tagId: t.integer() }))
      .relation("post", (rel) => ({ author: rel.belongsTo("user", { from: "authorId", to: "id" }) }))
      .relation("user", (rel) => ({
        posts: rel.hasMany("post", { from: "id", to: "authorId" }),
        latest: rel.hasOne("post", { from: "id", to: "authorId" }),
      }))
      .relation("post", (rel) => ({
        tags: rel.manyToMany("tag", "post_tag", { from: "id", to: "id", pivotFrom: "postId", pivotTo: "tagId" }),
      }))
      .relation("user", (rel) => ({ latest: rel.hasMany("post", { from: "id", to: "authorId" }) }))
      .build();
    expect(built.relations.post).toEqual({
      author: { kind: "belongsTo", name: "author", table: "post", target: "user", from: "authorId", to: "id" },
      tags: {
        kind: "manyToMany",
        name: "tags",
        table: "post",
        target: "tag",
        from: "id",
        to: "id",
        via: "post_tag",
        pivotFrom: "postId",
        pivotTo: "tagId",
      },
    });
    expect(Object.keys(built.relations.user)).toEqual(["posts", "latest"]);
    expect(built.relations.user.latest.kind).toBe("hasMany");
    expect("via" in built.relations.post.author).toBe(false);
  });
});

describe("extend", () => {
  const v1 = schema("1")
    .auth()
    .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.text() }))
    .relation("post", (rel) => ({ author: rel.belongsTo("user", { from: "authorId", to: "id" }) }))
    .files({ owner: true, attachTo: ["post"] })
    .build();

  test("deep-merges tables; builder columns win whether declared before or after", () => {
    const v2 = schema("2")
      .table("post", (t) => ({ title: t.text().nullable() }))
      .extend(v1)
      .table("post", (t) => ({ body: t.text() }))
      .table("tag", (t) => ({ id: t.serial().primaryKey() }))
      .build();
    expect(v2.version).toBe("2");
    expect(Object.keys(columnsOf(v2, "post"))).toEqual(["id", "title", "authorId", "body"]);
    expect(columnsOf(v2, "post").title.nullable).toBe(true);
    expect(columnsOf(v1, "post").title.nullable).toBe(false);
    expect(Object.keys(v2.tables)).toEqual([...Object.keys(v1.tables), "tag"]);
  });

  test("relations are de-duplicated by table and name, the builder winning", () => {
    const v2 = schema("2")
      .extend(v1)
      .relation("post", (rel) => ({ author: rel.hasOne("user", { from: "authorId", to: "id" }) }))
      .build();
    expect(Object.keys(v2.relations.post)).toEqual(["author", "files"]);
    expect(v2.relations.post.author.kind).toBe("hasOne");
    expect(v2.relations.user).toEqual(v1.relations.user);
  });

  test("carries the auth and files flags unless the builder has its own", () => {
    const carried = schema("2").extend(v1).build();
    expect(carried.auth).toEqual({ apiKeys: false });
    expect(carried.files).toEqual({ owner: true, attachTo: ["post"] });
    const own = schema("2").auth({ roles: ["admin"], apiKeys: true }).extend(v1).build();
    expect(own.auth).toEqual({ roles: ["admin"], apiKeys: true });
    expect(own.tables.apikey).toBeDefined();
  });

  test("core columns stay protected across extend", () => {
    const error = buildError(() => schema("2").table("user", (t) => ({ email: t.integer() })).extend(v1).build());
    expect(error.message).toMatch(/user\.email is a text column required by \.auth\(\)/);
  });

  test("rejects something that is not a built schema", () => {
    expect(() => schema("2").extend({} as never)).toThrow(/built schema/);
  });
});

describe("auth", () => {
  const built = schema("1").auth({ roles: ["admin", "editor", "admin"] }).build();

  test("adds user, session, account and verification with the admin fields", () => {
    expect(Object.keys(built.tables)).toEqual(["user", "session", "account", "verification"]);
    expect(Object.keys(columnsOf(built, "user"))).toEqual([
      "id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt", "role", "banned", "banReason", "banExpires",
    ]);
    expect(columnsOf(built, "user").id).toEqual(plain("text", { primaryKey: true }));
    expect(columnsOf(built, "user").email.unique).toBe(true);
    expect(columnsOf(built, "user").emailVerified.default).toEqual({ kind: "value", value: false });
    expect(columnsOf(built, "user").role).toEqual(plain("text", { nullable: true }));
    expect(columnsOf(built, "session").impersonatedBy.nullable).toBe(true);
    expect(built.auth).toEqual({ roles: ["admin", "editor"], apiKeys: false });
  });

  test("session.userId and account.userId cascade and are indexed", () => {
    for (const table of ["session", "account"]) {
      expect(columnsOf(built, table).userId).toEqual(
        plain("text", { index: true, references: { table: "user", column: "id", onDelete: "cascade" } }),
      );
    }
  });

  test("relations: user has many sessions and accounts, each belongs to a user", () => {
    expect(built.relations.user.sessions).toMatchObject({ kind: "hasMany", target: "session", from: "id", to: "userId" });
    expect(built.relations.user.accounts).toMatchObject({ kind: "hasMany", target: "account", from: "id", to: "userId" });
    expect(built.relations.session.user).toMatchObject({ kind: "belongsTo", target: "user", from: "userId", to: "id" });
    expect(built.relations.account.user).toMatchObject({ kind: "belongsTo", target: "user", from: "userId", to: "id" });
  });

  test("matches every field better-auth 1.7 with the admin and API-key plugins expects", () => {
    const withKeys = schema("1").auth({ apiKeys: true }).build();
    const expected = getAuthTables({ plugins: [admin(), apiKey()] } as never) as Record<
      string,
      { fields: Record<string, { type: string; required?: boolean; unique?: boolean; references?: { model: string; field: string; onDelete?: string } }> }
    >;
    const types: Record<string, ColumnType> = { string: "text", boolean: "boolean", date: "timestamp", number: "integer" };
    for (const [table, { fields }] of Object.entries(expected)) {
      const columns = columnsOf(withKeys, table);
      expect(Object.keys(columns), table).toEqual(["id", ...Object.keys(fields)]);
      for (const [name, field] of Object.entries(fields)) {
        const column = columns[name];
        expect(column.type, `${table}.${name}`).toBe(types[field.type]);
        expect(column.nullable, `${table}.${name}`).toBe(field.required === false);
        expect(column.unique, `${table}.${name}`).toBe(field.unique === true);
        if (field.references) {
          expect(column.references, `${table}.${name}`).toEqual({
            table: field.references.model,
            column: field.references.field,
            onDelete: field.references.onDelete,
          });
        }
      }
    }
  });

  test("apiKeys adds the apikey table; it is absent by default", () => {
    expect(built.tables.apikey).toBeUndefined();
    const withKeys = schema("1").auth({ apiKeys: true }).build();
    expect(withKeys.auth).toEqual({ apiKeys: true });
    expect(columnsOf(withKeys, "apikey").referenceId).toEqual(plain("text", { index: true }));
    expect(columnsOf(withKeys, "apikey").rateLimitMax.default).toEqual({ kind: "value", value: 10 });
  });

  test("re-declaring user adds columns and may override compatibly", () => {
    const extra = schema("1")
      .auth()
      .table("user", (t) => ({
        bio: t.text().nullable(),
        role: t.text().enum(["admin", "member"], { multiple: true }).nullable(),
        name: t.text().index(),
      }))
      .build();
    expect(Object.keys(columnsOf(extra, "user")).slice(-1)).toEqual(["bio"]);
    expect(columnsOf(extra, "user").role.enum).toEqual({ values: ["admin", "member"], multiple: true });
    expect(columnsOf(extra, "user").name.index).toBe(true);
  });

  test("changing a core column throws at the call, naming it", () => {
    const base = schema("1").auth();
    expect(() => base.table("user", (t) => ({ email: t.integer() }))).toThrow(
      /user\.email is a text column required by \.auth\(\); it cannot become integer/,
    );
    expect(() => base.table("user", (t) => ({ image: t.text() }))).toThrow(/user\.image must stay nullable/);
    expect(() => base.table("session", (t) => ({ userId: t.text() }))).toThrow(/session\.userId must keep its reference/);
    expect(() => base.table("user", (t) => ({ id: t.text() }))).toThrow(/user\.id must stay the primary key/);
    expect(() => base.table("user", (t) => ({ email: t.integer() }))).toThrow(SchemaError);
  });

  test("roles must be comma-free strings", () => {
    expect(() => schema("1").auth({ roles: ["a,b"] })).toThrow(/without commas/);
  });
});

describe("files", () => {
  const base = schema("1")
    .auth()
    .table("post", (t) => ({ id: t.serial().primaryKey() }))
    .table("doc", (t) => ({ id: t.uuid().primaryKey() }))
    .table("note", (t) => ({ id: t.text().primaryKey() }));

  test("adds the file table, owned by user", () => {
    const built = base.files().build();
    const stamp = plain("timestamp", { default: { kind: "sql", sql: "CURRENT_TIMESTAMP" } });
    expect(columnsOf(built, "file")).toEqual({
      id: plain("text", { primaryKey: true }),
      key: plain("text", { unique: true }),
      name: plain("text"),
      type: plain("text"),
      size: plain("integer"),
      userId: plain("text", { nullable: true, index: true, references: { table: "user", column: "id", onDelete: "set null" } }),
      createdAt: stamp,
      updatedAt: stamp,
    });
    expect(built.files).toEqual({ owner: true, attachTo: [] });
    expect(built.relations.user.files).toMatchObject({ kind: "hasMany", target: "file", from: "id", to: "userId" });
    expect(built.relations.file.user).toMatchObject({ kind: "belongsTo", target: "user", from: "userId", to: "id" });
  });

  test("owner: false omits file.userId and the relations, and needs no auth", () => {
    const built = schema("1").files({ owner: false }).build();
    expect(columnsOf(built, "file").userId).toBeUndefined();
    expect(built.relations.user).toBeUndefined();
    expect(built.relations.file).toEqual({});
  });

  test("owner without .auth() throws at build", () => {
    const error = buildError(() => schema("1").files().build());
    expect(error.message).toMatch(/\.files\(\) with owner needs \.auth\(\)/);
  });

  test("attachTo adds a pivot per table with entityId typed like the key", () => {
    const built = base.files({ attachTo: ["post", "doc", "note"] }).build();
    expect(columnsOf(built, "post_file")).toEqual({
      id: plain("serial", { primaryKey: true }),
      fileId: plain("text", { index: true, references: { table: "file", column: "id", onDelete: "cascade" } }),
      entityId: plain("integer", { index: true, references: { table: "post", column: "id", onDelete: "cascade" } }),
      role: plain("text", { nullable: true }),
      position: plain("integer", { default: { kind: "value", value: 0 } }),
    });
    expect(columnsOf(built, "doc_file").entityId.type).toBe("uuid");
    expect(columnsOf(built, "note_file").entityId.type).toBe("text");
    expect(built.files?.attachTo).toEqual(["post", "doc", "note"]);
  });

  test("attachTo relations go both ways", () => {
    const built = base.files({ attachTo: ["post"] }).build();
    expect(built.relations.post.files).toEqual({
      kind: "manyToMany",
      name: "files",
      table: "post",
      target: "file",
      from: "id",
      to: "id",
      via: "post_file",
      pivotFrom: "entityId",
      pivotTo: "fileId",
    });
    expect(built.relations.file.post).toEqual({
      kind: "manyToMany",
      name: "post",
      table: "file",
      target: "post",
      from: "id",
      to: "id",
      via: "post_file",
      pivotFrom: "fileId",
      pivotTo: "entityId",
    });
  });

  test("an unknown attachTo table throws at build", () => {
    const error = buildError(() => base.files({ attachTo: ["comment" as never] }).build());
    expect(error.message).toMatch(/attachTo table "comment" does not exist/);
  });

  test("attaching to a table without a primary key, or to user while owned, throws", () => {
    const keyless = schema("1").table("log", (t) => ({ line: t.text() }));
    expect(() => keyless.files({ owner: false, attachTo: ["log"] })).toThrow(/"log": it has no primary key/);
    expect(() => base.files({ attachTo: ["user"] })).toThrow(/file\.user/);
  });

  test("file core columns are protected like auth's", () => {
    expect(() => base.files().table("file", (t) => ({ size: t.text() }))).toThrow(/file\.size is a integer column required by \.files\(\)/);
  });
});

describe("build-time validation", () => {
  test("references must point at an existing, unique column of a compatible type", () => {
    const error = buildError(() =>
      schema("1")
        .table("user", (t) => ({ id: t.text().primaryKey(), name: t.text(), n: t.integer().unique() }))
        .table("post", (t) => ({
          a: t.text().references("users", "id"),
          b: t.text().references("user", "uid"),
          c: t.text().references("user", "name"),
          d: t.text().references("user", "n"),
          e: t.text().references("user", "id", { onDelete: "set null" }),
        }))
        .build(),
    );
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.problems).toEqual([
      'post.a references missing table "users"',
      "post.b references missing column user.uid",
      "post.c references user.name, which is neither a primary key nor unique",
      "post.d is text but references user.n of type integer",
      'post.e uses "set null" but is not nullable',
    ]);
    expect(error.message).toContain('Schema "1":');
    expect(error.message).toContain("post.b references missing column user.uid");
  });

  test("at most one primary key per table, never nullable", () => {
    const error = buildError(() =>
      schema("1")
        .table("a", (t) => ({ x: t.serial().primaryKey(), y: t.text().primaryKey() }))
        .table("b", (t) => ({ id: t.text().primaryKey().nullable() }))
        .build(),
    );
    expect(error.problems).toEqual([
      'table "a" has 2 primary keys (x, y); at most one is allowed',
      "b.id is a primary key and cannot be nullable",
    ]);
  });

  test("a table needs columns", () => {
    expect(() => schema("1").table("a", () => ({})).build()).toThrow(/table "a" has no columns/);
  });

  test("relation tables and columns must exist", () => {
    const base = schema("1")
      .table("a", (t) => ({ id: t.serial().primaryKey() }))
      .table("b", (t) => ({ id: t.serial().primaryKey(), aId: t.integer() }));
    const rel = base.relation as (table: string, define: (rel: any) => any) => typeof base;
    const error = buildError(() =>
      rel
        .call(base, "a", (r) => ({
          bs: r.hasMany("b", { from: "id", to: "a_id" }),
          cs: r.hasMany("c", { from: "id", to: "aId" }),
          xs: r.manyToMany("b", "a_b", { from: "id", to: "id", pivotFrom: "aId", pivotTo: "bId" }),
          ys: r.manyToMany("b", "b", { from: "uid", to: "id", pivotFrom: "aId", pivotTo: "bId" }),
        }))
        .build(),
    );
    expect(error.problems).toEqual([
      'relation a.bs: "to" column b.a_id does not exist',
      'relation a.cs targets missing table "c"',
      'relation a.xs: pivot table "a_b" does not exist',
      'relation a.ys: "from" column a.uid does not exist',
      "relation a.ys: pivot column b.bId does not exist",
    ]);
    expect(() => rel.call(base, "a", () => ({ bs: { kind: "hasSome" } }))).toThrow(/a\.bs is not a relation/);
    const orphan = buildError(() => rel.call(base, "z", (r) => ({ as: r.hasMany("a", { from: "id", to: "id" }) })).build());
    expect(orphan.problems).toEqual(['relation z.as is declared on missing table "z"']);
  });
});

describe("built result", () => {
  const built = schema("1")
    .auth({ roles: ["admin"] })
    .table("post", (t) => ({ id: t.serial().primaryKey(), s: t.text().enum(["a"]).default("a") }))
    .files({ attachTo: ["post"] })
    .build();

  test("is deeply frozen", () => {
    const seen: unknown[] = [];
    const walk = (value: unknown) => {
      if (value === null || typeof value !== "object") return;
      seen.push(value);
      expect(Object.isFrozen(value)).toBe(true);
      for (const child of Object.values(value)) walk(child);
    };
    walk(built);
    expect(seen.length).toBeGreaterThan(100);
    expect(() => {
      (built.tables.post.columns.s.default as { value: unknown }).value = "b";
    }).toThrow(TypeError);
  });

  test("is plain data: a JSON round trip gives it back, with no phantom keys", () => {
    expect(JSON.parse(JSON.stringify(built))).toEqual(built);
    expect(Object.keys(built)).toEqual(["version", "tables", "relations", "auth", "files"]);
    expect(Object.keys(schema("2").table("a", (t) => ({ x: t.text() })).build())).toEqual(["version", "tables", "relations"]);
    expect(built.tables.post.name).toBe("post");
  });
});

describe("sets", () => {
  test("parseSet trims, drops empties and treats null as empty", () => {
    expect(parseSet("a,b")).toEqual(["a", "b"]);
    expect(parseSet(" a , ,b,")).toEqual(["a", "b"]);
    expect(parseSet("")).toEqual([]);
    expect(parseSet(null)).toEqual([]);
    expect(parseSet(undefined)).toEqual([]);
  });

  test("toSet de-duplicates in order and rejects commas", () => {
    expect(toSet(["a", "b"])).toBe("a,b");
    expect(toSet(["b", "a", "b", " a ", ""])).toBe("b,a");
    expect(toSet(new Set(["x"]))).toBe("x");
    expect(toSet([])).toBe("");
    expect(() => toSet(["a,b"])).toThrow(/"a,b" contains a comma/);
    expect(parseSet(toSet(["r", "s", "r"]))).toEqual(["r", "s"]);
  });
});
