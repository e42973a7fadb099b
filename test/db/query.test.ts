import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppDatabase } from "../../kernel/db/database.js";
import { QueryError } from "../../kernel/db/query-error.js";
import { INCLUDE_LIMIT } from "../../kernel/db/relations.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { families } from "../support/databases.js";
import { openHarness, type Harness } from "./harness.js";

const model = schema("1")
  .table("user", (t) => ({ id: t.serial().primaryKey(), name: t.text(), ...timestamps(t) }))
  .table("profile", (t) => ({ id: t.serial().primaryKey(), userId: t.integer().unique().references("user", "id"), bio: t.text() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    rank: t.integer().nullable(),
    authorId: t.integer().nullable().references("user", "id"),
    ...timestamps(t),
  }))
  .table("comment", (t) => ({ id: t.serial().primaryKey(), postId: t.integer().references("post", "id"), body: t.text(), big: t.bigint().nullable() }))
  .table("tag", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .table("post_tag", (t) => ({ id: t.serial().primaryKey(), postId: t.integer().references("post", "id"), tagId: t.integer().references("tag", "id") }))
  .relation("user", (rel) => ({
    posts: rel.hasMany("post", { from: "id", to: "authorId" }),
    profile: rel.hasOne("profile", { from: "id", to: "userId" }),
  }))
  .relation("post", (rel) => ({
    author: rel.belongsTo("user", { from: "authorId", to: "id" }),
    comments: rel.hasMany("comment", { from: "id", to: "postId" }),
    tags: rel.manyToMany("tag", "post_tag", { from: "id", to: "id", pivotFrom: "postId", pivotTo: "tagId" }),
  }))
  .build();

describe.each(families())("query API on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family, [model]);
    const db = h.kysely;
    await db.insertInto("user").values([{ name: "ann" }, { name: "bob" }, { name: "cy" }]).execute();
    await db.insertInto("profile").values([{ userId: 1, bio: "ann's" }]).execute();
    // 30 posts: authors cycle ann, bob, (none); ranks 30..1 with every fifth NULL.
    const posts = Array.from({ length: 30 }, (_, i) => ({ title: `post ${i + 1}`, rank: (i + 1) % 5 === 0 ? null : 30 - i, authorId: [1, 2, null][i % 3] }));
    await db.insertInto("post").values(posts).execute();
    await db.insertInto("comment").values([
      { postId: 1, body: "first", big: h.kind === "sqlite" ? 9223372036854775807n : "9223372036854775807" },
      { postId: 1, body: "second", big: null },
      { postId: 2, body: "third", big: null },
    ]).execute();
    await db.insertInto("tag").values([{ name: "x" }, { name: "y" }]).execute();
    await db.insertInto("post_tag").values([{ postId: 1, tagId: 2 }, { postId: 1, tagId: 1 }, { postId: 3, tagId: 1 }]).execute();
  });
  afterAll(() => h?.close());

  it("includes belongsTo, hasMany and manyToMany, decoded, and nothing not asked for", async () => {
    const [first, second, third] = await h.db.query.post.findMany({ take: 3, include: { author: true, comments: true, tags: true } });
    expect(first).toMatchObject({ id: 1, title: "post 1", author: { id: 1, name: "ann" } });
    expect((first!.author as { createdAt: unknown }).createdAt).toBeInstanceOf(Date);
    expect(first!.comments).toEqual([
      { id: 1, postId: 1, body: "first", big: "9223372036854775807" },
      { id: 2, postId: 1, body: "second", big: null },
    ]);
    expect(first!.tags).toEqual([{ id: 1, name: "x" }, { id: 2, name: "y" }]);
    expect(second).toMatchObject({ id: 2, author: { name: "bob" }, comments: [{ body: "third" }], tags: [] });
    expect(third).toMatchObject({ id: 3, authorId: null, author: null, comments: [], tags: [{ name: "x" }] });
    const plain = await h.db.query.post.findFirst();
    expect(plain).not.toHaveProperty("author");
    expect(plain!.createdAt).toBeInstanceOf(Date);
  });

  it("includes hasOne as an object or null, and hasMany in key order", async () => {
    const users = await h.db.query.user.findMany({ include: { profile: true, posts: true } });
    expect(users.map((u) => u.profile)).toEqual([{ id: 1, userId: 1, bio: "ann's" }, null, null]);
    expect((users[0]!.posts as { id: number }[]).map((p) => p.id)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
    expect(users[2]!.posts).toEqual([]);
  });

  it("runs at most one statement per included relation, whatever the number of rows", async () => {
    const count = async (take: number) => {
      h.statements.length = 0;
      await h.db.query.post.findMany({ take, include: { author: true, comments: true, tags: true } });
      return h.statements.length;
    };
    const few = await count(2);
    const many = await count(30);
    expect(many).toBe(few);
    expect(many).toBeLessThanOrEqual(1 + 3);
    // Postgres answers in one statement; SQLite batches one per relation.
    expect(many).toBe(h.kind === "postgres" ? 1 : 4);
  });

  it("caps included rows per parent", async () => {
    const values = Array.from({ length: INCLUDE_LIMIT + 5 }, (_, i) => ({ postId: 30, body: `c${i}` }));
    await h.kysely.insertInto("comment").values(values).execute();
    const post = await h.db.query.post.findFirst({ where: { id: 30 }, include: { comments: true } });
    expect(post!.comments).toHaveLength(INCLUDE_LIMIT);
    expect((post!.comments as { body: string }[])[0]!.body).toBe("c0");
    await h.kysely.deleteFrom("comment").where("postId", "=", 30).execute();
  });

  it("includes only the related rows an include's where matches, in the same statements", async () => {
    h.statements.length = 0;
    const posts = await h.db.query.post.findMany({
      take: 3,
      include: { comments: { where: { body: { not: "first" } } }, author: { where: { name: "bob" } }, tags: { where: { name: "x" } } },
    });
    expect(h.statements).toHaveLength(h.kind === "postgres" ? 1 : 4);
    expect(posts.map((p) => (p.comments as { body: string }[]).map((c) => c.body))).toEqual([["second"], ["third"], []]);
    expect(posts.map((p) => (p.author as { name: string } | null)?.name ?? null)).toEqual([null, "bob", null]);
    expect(posts.map((p) => (p.tags as { name: string }[]).map((t) => t.name))).toEqual([["x"], [], ["x"]]);
    // Matches-nothing keeps the parent rows and empties the relation; no where is everything.
    const none = await h.db.query.post.findFirst({ include: { comments: { where: { OR: [] } }, author: {} } });
    expect(none).toMatchObject({ id: 1, comments: [], author: { name: "ann" } });
  });

  it("relation filters in server code: every operator and relation kind, count, predicate, and scope", async () => {
    const ids = async (where: Record<string, unknown>) => (await h.db.query.post.findMany({ where, take: 30 })).map((p) => p.id);
    expect(await ids({ comments: { some: { body: "third" } } })).toEqual([2]);
    expect(await ids({ tags: { every: { name: "x" } }, id: { lte: 4 } })).toEqual([2, 3, 4]);
    expect(await ids({ tags: { none: { name: "x" } }, id: { lte: 4 } })).toEqual([2, 4]);
    expect(await ids({ author: { is: { profile: { is: { bio: "ann's" } } } }, id: { lte: 7 } })).toEqual([1, 4, 7]);
    expect(await ids({ author: { isNot: { name: "ann" } }, id: { lte: 4 } })).toEqual([2, 3]);
    expect(await h.db.query.user.count({ where: { profile: { is: null } } })).toBe(2);
    expect(await h.db.query.user.count({ where: { posts: { some: { comments: { some: {} } } } } })).toBe(2);
    // A related row whose where is unknown (NULL) fails `every`.
    expect(await ids({ comments: { every: { big: { gt: 0 } } }, id: { lte: 2 } })).toEqual([]);
    // scope: trusted rules, and the related tables a caller's filter may reach.
    const scoped = { related: { comment: { body: { not: "third" } } } };
    expect(await h.db.query.post.count({ where: { comments: { some: {} } }, scope: scoped })).toBe(1);
    const refused = await h.db.query.post.findMany({ where: { tags: { some: {} } }, scope: scoped }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ path: "where.tags.some", message: 'where.tags.some: relation filters cannot reach table "tag"' });
    expect(await h.db.query.post.count({ scope: { where: { tags: { some: {} } }, related: {} } })).toBe(2);
    const renamed = await h.kysely.updateTable("post").set({ title: "tagged" }).where(h.db.query.post.predicate({ tags: { some: { name: "y" } } })!).returning("id").execute();
    expect(renamed).toEqual([{ id: 1 }]);
    await h.kysely.updateTable("post").set({ title: "post 1" }).where("id", "=", 1).execute();
    expect(h.db.query.post.predicate({})).toBeUndefined();
  });

  it("orders by the given columns with NULLs last ascending, then by primary key", async () => {
    const asc = await h.db.query.post.findMany({ orderBy: [{ rank: "asc" }], take: 30 });
    expect(asc.slice(0, 3).map((p) => p.rank)).toEqual([2, 3, 4]);
    expect(asc.slice(-6).map((p) => p.id)).toEqual([5, 10, 15, 20, 25, 30]);
    const desc = await h.db.query.post.findMany({ orderBy: [{ rank: "desc" }], take: 2 });
    expect(desc.map((p) => p.id)).toEqual([5, 10]);
    const byAuthor = await h.db.query.post.findMany({ orderBy: [{ authorId: "desc" }, { id: "desc" }], take: 3 });
    expect(byAuthor.map((p) => p.id)).toEqual([30, 27, 24]);
    expect((await h.db.query.post.findMany({ take: 3 })).map((p) => p.id)).toEqual([1, 2, 3]);
  });

  it("pages with take and skip, also skip alone", async () => {
    expect((await h.db.query.post.findMany({ skip: 5, take: 2 })).map((p) => p.id)).toEqual([6, 7]);
    expect((await h.db.query.post.findMany({ skip: 28 })).map((p) => p.id)).toEqual([29, 30]);
    expect(await h.db.query.post.findMany({ take: 0 })).toEqual([]);
    expect(await h.db.query.post.findFirst({ where: { title: "missing" } })).toBeNull();
  });

  it("counts with a where", async () => {
    expect(await h.db.query.post.count()).toBe(30);
    expect(await h.db.query.post.count({ where: { authorId: null } })).toBe(10);
    expect(await h.db.query.post.count({ where: { OR: [] } })).toBe(0);
  });

  const refused: [string, () => Promise<unknown>, string][] = [
    ["an unknown relation", () => h.db.query.post.findMany({ include: { editor: true } as never }), "include.editor"],
    ["an include that is not true", () => h.db.query.post.findMany({ include: { author: "yes" } as never }), "include.author"],
    ["an include where on an unknown column", () => h.db.query.post.findMany({ include: { comments: { where: { title: "x" } } } }), "include.comments.where.title"],
    ["an unknown include argument", () => h.db.query.post.findMany({ include: { comments: { take: 1 } as never } }), "include.comments.take"],
    ["an unknown order column", () => h.db.query.post.findMany({ orderBy: [{ nope: "asc" }] as never }), "orderBy[0].nope"],
    ["a bad direction", () => h.db.query.post.findMany({ orderBy: [{ id: "up" }] as never }), "orderBy[0].id"],
    ["two columns in one order entry", () => h.db.query.post.findMany({ orderBy: [{ id: "asc", rank: "asc" }] as never }), "orderBy[0]"],
    ["a negative take", () => h.db.query.post.findMany({ take: -1 }), "take"],
    ["a fractional skip", () => h.db.query.post.findMany({ skip: 1.5 }), "skip"],
    ["an unknown argument", () => h.db.query.post.findMany({ limit: 1 } as never), "limit"],
    ["an argument count does not take", () => h.db.query.post.count({ take: 1 } as never), "take"],
  ];
  it.each(refused)("refuses %s with a 400 naming the path", async (_, call, path) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect(error).toMatchObject({ path, status: 400 });
  });

  it("is the Kysely instance itself, with query and transact attached", async () => {
    expect(typeof h.db.selectFrom).toBe("function");
    expect(Object.keys(h.db)).not.toContain("query");
    const names = await h.db.selectFrom("user").select("name").orderBy("id").execute();
    expect(names.map((n) => n.name)).toEqual(["ann", "bob", "cy"]);
    const inside = await h.db.transact(async (trx) => {
      await trx.insertInto("tag").values({ name: "z" }).execute();
      return trx.query.tag.count();
    });
    expect(inside).toBe(3);
    await expect(
      h.db.transact(async (trx) => {
        await trx.insertInto("tag").values({ name: "rolled back" }).execute();
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await h.db.query.tag.count({ where: { name: "rolled back" } })).toBe(0);
  });

  it("nests transact as a savepoint and routes the outer db into the open transaction", async () => {
    await h.db.transact(async (trx) => {
      await trx.insertInto("tag").values({ name: "outer" }).execute();
      // The outer instance joins the transaction instead of waiting for the connection.
      expect(await h.db.query.tag.count({ where: { name: "outer" } })).toBe(1);
      await expect(
        trx.transact(async (inner) => {
          await inner.insertInto("tag").values({ name: "inner" }).execute();
          expect(await inner.query.tag.count({ where: { name: "inner" } })).toBe(1);
          throw new Error("undo the inner part only");
        }),
      ).rejects.toThrow("undo the inner part only");
    });
    expect(await h.db.query.tag.count({ where: { name: { in: ["outer", "inner"] } } })).toBe(1);
    await h.db.deleteFrom("tag").where("name", "=", "outer").execute();
  });

  it("falls back to Kysely's own transactions without a dialect-level transact", async () => {
    const plain = createAppDatabase(h.kysely.withoutPlugins(), h.kind, model);
    const count = await plain.transact(async (trx) => {
      await trx.insertInto("tag").values({ name: "plain" }).execute();
      return trx.transact((same) => same.query.tag.count({ where: { name: "plain" } }));
    });
    expect(count).toBe(1);
    await plain.deleteFrom("tag").where("name", "=", "plain").execute();
  });

  it("reads rows written with SQLite's own CURRENT_TIMESTAMP form as UTC", async () => {
    if (h.kind !== "sqlite") return;
    await sql`update "user" set "createdAt" = '2024-05-06 07:08:09' where id = 3`.execute(h.kysely);
    const user = await h.db.query.user.findFirst({ where: { id: 3 } });
    expect(user!.createdAt).toEqual(new Date("2024-05-06T07:08:09.000Z"));
  });
});
