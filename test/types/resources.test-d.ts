import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { App, type InferRouter } from "../../presets/trellis.js";
import { createClient, isRpcError, RpcError } from "../../presets/client.js";
import { schema, type WhereOf } from "../../kernel/schema/index.js";
import { sqliteMemory } from "../support/app.js";
import type { AuditEntry } from "../../plugins/index.js";

const v1 = schema("1")
  .auth()
  .table("tag", (t) => ({ id: t.serial().primaryKey(), label: t.text() }))
  .table("post_tag", (t) => ({ postId: t.integer(), tagId: t.integer() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().nullable(),
    status: t.text().enum(["draft", "published"]).default("draft"),
    views: t.integer().default(0),
    big: t.bigint(),
    price: t.decimal().nullable(),
    at: t.timestamp().defaultSql("CURRENT_TIMESTAMP"),
    day: t.date().nullable(),
    meta: t.jsonb(),
    blob: t.bytes().nullable(),
    authorId: t.text(),
    slug: t.text(),
  }))
  .table("note", (t) => ({ key: t.uuid().primaryKey(), text: t.text(), secret: t.text().default("x") }))
  .table("memo", (t) => ({ id: t.serial().primaryKey(), text: t.text(), deletedAt: t.timestamp().nullable() }))
  .relation("post", (rel) => ({
    author: rel.belongsTo("user", { from: "authorId", to: "id" }),
    tags: rel.manyToMany("tag", "post_tag", { from: "id", to: "id", pivotFrom: "postId", pivotTo: "tagId" }),
  }))
  .build();

const app = new App({ db: sqliteMemory() })
  .schema(v1)
  .resource("post", { ownerColumn: "authorId", readonly: ["slug"], includable: ["author", { relation: "tags", scoped: false }], live: true })
  .resource("note", { writable: ["text"] })
  .resource("tag")
  .resource("memo", { softDelete: { purgeAfter: "7d" } })
  .procedure("echo", (base) => base.input(z.object({ n: z.number() })).handler(({ input }) => ({ twice: input.n * 2 })))
  .procedure("recent", (base) =>
    base.handler(async ({ context }) => {
      // @ts-expect-error context.db.query is typed from the schema
      void context.db.query.post.findMany({ where: { titel: "a" } });
      const inTransaction = await context.db.transact((trx) => trx.query.tag.findFirst());
      expectTypeOf(inTransaction).toEqualTypeOf<{ id: number; label: string } | null>();
      return context.db.query.post.findMany({ where: { status: "published" }, include: { tags: true }, take: 5 });
    }),
  );

const client = app.build().client();
const remote = createClient<InferRouter<typeof app>>({ url: "http://localhost" });

type PostRow = {
  id: number;
  title: string;
  body: string | null;
  status: "draft" | "published";
  views: number;
  big: string;
  price: string | null;
  at: Date;
  day: Date | null;
  meta: unknown;
  blob: Uint8Array | null;
  authorId: string;
  slug: string;
};

describe("resource procedures on the in-process client and createClient", () => {
  it("types list rows, with included relations by kind", async () => {
    for (const c of [client, remote]) {
      expectTypeOf(await c.post.list()).toEqualTypeOf<PostRow[]>();
      const [row] = await c.post.list({ include: { author: true, tags: true }, where: { views: { gt: 1 } }, orderBy: [{ at: "desc" }], take: 5 });
      expectTypeOf(row!.tags).toEqualTypeOf<{ id: number; label: string }[]>();
      expectTypeOf(row!.author).toMatchTypeOf<{ id: string; email: string } | null>();
      expectTypeOf(row!.title).toEqualTypeOf<string>();
      const got = await c.post.get({ where: { id: 1 }, include: { tags: true } });
      expectTypeOf(got).toEqualTypeOf<PostRow & { tags: { id: number; label: string }[] }>();
      expectTypeOf(await c.post.get({ where: { id: 1 } })).toEqualTypeOf<PostRow>();
      expectTypeOf(await c.note.get({ where: { key: "k" } })).toEqualTypeOf<{ key: string; text: string; secret: string }>();
    }
  });

  it("refuses wrong where, orderBy and include on list and get", () => {
    // @ts-expect-error 'titel' is not a column
    void client.post.list({ where: { titel: "a" } });
    // @ts-expect-error contains is for text
    void remote.post.list({ where: { views: { contains: 1 } } });
    // @ts-expect-error gt on text, with a Date
    void client.post.list({ where: { title: { gt: new Date() } } });
    // @ts-expect-error resources take an array of orderBy entries
    void client.post.list({ orderBy: { title: "asc" } });
    // @ts-expect-error 'titel' is not a column
    void client.post.list({ orderBy: [{ titel: "asc" }] });
    // @ts-expect-error 'autor' is not includable
    void client.post.list({ include: { autor: true } });
    // @ts-expect-error tag has no includable relations
    void client.tag.list({ include: { posts: true } });
    // @ts-expect-error resources include with true only
    void client.post.list({ include: { tags: { where: { label: "x" } } } });
    // @ts-expect-error get needs the primary key
    void client.post.get({ where: { title: "a" } });
    // @ts-expect-error the key of note is a uuid string
    void client.note.get({ where: { key: 1 } });
  });

  it("types create data: serial, owner and readonly out, defaults and nullables optional", async () => {
    type Create = Parameters<typeof client.post.create>[0];
    expectTypeOf<Create>().toEqualTypeOf<{
      title: string;
      big: string | number | bigint;
      meta: unknown;
      body?: string | null;
      status?: "draft" | "published";
      views?: number;
      price?: string | number | null;
      at?: Date | string;
      day?: Date | string | null;
      blob?: Uint8Array | null;
    }>();
    expectTypeOf(await client.post.create({ title: "a", big: 1n, meta: {} })).toEqualTypeOf<PostRow>();
    // @ts-expect-error title is required
    void client.post.create({ big: "1", meta: null });
    // @ts-expect-error slug is readonly
    void client.post.create({ title: "a", big: "1", meta: null, slug: "x" });
    // @ts-expect-error authorId is the owner column
    void client.post.create({ title: "a", big: "1", meta: null, authorId: "u" });
    // @ts-expect-error id is serial
    void client.post.create({ id: 1, title: "a", big: "1", meta: null });
    // @ts-expect-error views is an integer
    void client.post.create({ title: "a", big: "1", meta: null, views: "1" });
    // @ts-expect-error only writable columns
    void client.note.create({ text: "a", secret: "b" });
    expectTypeOf<Parameters<typeof client.note.create>[0]>().toEqualTypeOf<{ text: string }>();
  });

  it("types update and delete", async () => {
    expectTypeOf(await client.post.update({ where: { id: 1 }, data: { views: 2, body: null } })).toEqualTypeOf<PostRow>();
    // @ts-expect-error the primary key is not updatable
    void client.post.update({ where: { id: 1 }, data: { id: 2 } });
    // @ts-expect-error slug is readonly
    void client.post.update({ where: { id: 1 }, data: { slug: "x" } });
    // @ts-expect-error title is not nullable
    void client.post.update({ where: { id: 1 }, data: { title: null } });
    expectTypeOf(await client.post.delete({ where: { id: 1 } })).toEqualTypeOf<PostRow>();
    // @ts-expect-error delete takes the key only
    void client.post.delete({ where: { id: 1, title: "a" } });
  });

  it("types live where it is on, and only there", async () => {
    const stream = await client.post.live({ include: { tags: true }, where: { status: "published" } });
    expectTypeOf(stream).toEqualTypeOf<AsyncIterableIterator<(PostRow & { tags: { id: number; label: string }[] })[]>>();
    // @ts-expect-error live takes no skip
    void client.post.live({ skip: 1 });
    expectTypeOf(client.note).not.toHaveProperty("live");
  });

  it("types restore where softDelete is on, and only there", async () => {
    type MemoRow = { id: number; text: string; deletedAt: Date | null };
    expectTypeOf(await client.memo.restore({ where: { id: 1 } })).toEqualTypeOf<MemoRow>();
    expectTypeOf(await remote.memo.restore({ where: { id: 1 } })).toEqualTypeOf<MemoRow>();
    // @ts-expect-error restore takes the key only
    void client.memo.restore({ where: { text: "a" } });
    expectTypeOf(client.note).not.toHaveProperty("restore");
    expectTypeOf(remote.post).not.toHaveProperty("restore");
  });

  it("types history where the history option is on, and only there", async () => {
    const audited = new App({ db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789" })
      .resource("memo", { history: true })
      .resource("note", { history: true })
      .resource("tag", { history: false })
      .audit();
    const local = audited.build().client();
    const far = createClient<InferRouter<typeof audited>>({ url: "http://localhost" });
    for (const c of [local, far]) {
      const page = await c.memo.history({ where: { id: 1 }, cursor: "42", take: 10 });
      expectTypeOf(page).toEqualTypeOf<{ entries: AuditEntry[]; nextCursor: string | null }>();
      expectTypeOf(page.entries[0]!.op).toEqualTypeOf<"insert" | "update" | "delete">();
      expectTypeOf(page.entries[0]!.before).toEqualTypeOf<Record<string, unknown> | null>();
      // The key is the table's own: a uuid named `key` on note.
      void c.note.history({ where: { key: "0b6f8a4e-5c0e-4c38-9a1e-0f2d7b0f6a51" } });
      // @ts-expect-error history names the row by its key only
      void c.memo.history({ where: { text: "a" } });
      // @ts-expect-error take is a number
      void c.memo.history({ where: { id: 1 }, take: "10" });
      // @ts-expect-error the row is required
      void c.memo.history({});
      expectTypeOf(c.tag).not.toHaveProperty("history");
    }
    expectTypeOf(client.memo).not.toHaveProperty("history");
    expectTypeOf(remote.post).not.toHaveProperty("history");
  });

  it("carries db.query's row types through a procedure's output", async () => {
    expectTypeOf(await remote.recent()).toEqualTypeOf<(PostRow & { tags: { id: number; label: string }[] })[]>();
  });

  it("leaves zod-typed procedures to oRPC's inference", async () => {
    expectTypeOf(await client.echo({ n: 1 })).toEqualTypeOf<{ twice: number }>();
    expectTypeOf(await remote.echo({ n: 1 })).toEqualTypeOf<{ twice: number }>();
    // @ts-expect-error n is a number
    void remote.echo({ n: "1" });
  });
});

describe("errors from trellis/client", () => {
  it("narrows with isRpcError, by code when given", async () => {
    const error: unknown = await client.post.get({ where: { id: 1 } }).catch((e: unknown) => e);
    if (isRpcError(error, "NOT_FOUND")) {
      expectTypeOf(error.code).toEqualTypeOf<"NOT_FOUND">();
      expectTypeOf(error.status).toEqualTypeOf<number>();
    }
    if (isRpcError(error)) expectTypeOf(error).toMatchTypeOf<RpcError<string, unknown>>();
  });
});

describe("relation filters and where rules", () => {
  it("types relation filters on the client by relation kind and target table", () => {
    void client.post.list({ where: { tags: { some: { label: "x" } }, author: { is: { email: "a@b.c" } } } });
    void client.post.list({ where: { tags: { every: { label: { startsWith: "a" } }, none: {} }, author: { isNot: null } } });
    void client.post.live({ where: { OR: [{ tags: { some: {} } }, { author: { is: null } }] } });
    // @ts-expect-error is applies to belongsTo and hasOne, not to manyToMany
    void client.post.list({ where: { tags: { is: {} } } });
    // @ts-expect-error some applies to hasMany and manyToMany
    void client.post.list({ where: { author: { some: {} } } });
    // @ts-expect-error the nested where is the target table's: tag has no column title
    void client.post.list({ where: { tags: { some: { title: "x" } } } });
  });

  it("checks a where rule against the table, relations included", () => {
    new App({ db: sqliteMemory() }).schema(v1).resource("post", { permissions: { list: { OR: [{ authorId: "$user.id" }, { tags: { some: { label: "public" } } }] } } });
    // @ts-expect-error a where rule names columns of the table
    new App({ db: sqliteMemory() }).schema(v1).resource("post", { permissions: { list: { nope: 1 } } });
    // A function's answer is checked when it declares the table's where type.
    const mine = ({ context }: { context: { user: { id: string } | null } }): WhereOf<typeof v1, "post"> | boolean => (context.user ? { authorId: context.user.id } : false);
    new App({ db: sqliteMemory() }).schema(v1).resource("post", { permissions: { get: mine, update: mine } });
    // @ts-expect-error 'titel' is not a column of post
    const typo = (): WhereOf<typeof v1, "post"> => ({ titel: "x" });
    void typo;
  });
});
