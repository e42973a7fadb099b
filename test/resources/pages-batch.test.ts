import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { createFixtureApp } from "./fixture.js";

describe.each(families())("cursor pages and batch writes on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createFixtureApp>["start"]>>;
  let alice: SignedIn;
  let bob: SignedIn;
  const errors: unknown[] = [];
  const as = (user: SignedIn | null): HeadersInit => (user ? { cookie: user.cookie } : {});
  const client = (user: SignedIn) =>
    createClient<InferRouter<ReturnType<typeof createFixtureApp>>>({
      url: ORIGIN,
      headers: { cookie: user.cookie },
      fetch: (input, init) => app.handle(new Request(input as RequestInfo, init as RequestInit)),
    });

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createFixtureApp(db, (error) => errors.push(error)).openapi().start();
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "bob@example.test");
    // views repeat (ties broken by id) and some are null-free; kitchen.qty has nulls.
    for (let i = 0; i < 12; i++) await app.db.insertInto("post").values({ title: `p${i}`, views: i % 4, authorId: alice.userId }).execute();
    for (let i = 0; i < 7; i++) {
      const none = i % 3 === 0;
      await rpc(app, "kitchen.create", {
        label: `k${i}`,
        qty: none ? null : i,
        price: none ? null : `${(i * 7) % 5}.25`,
        big: none ? null : `${9_007_199_254_740_993n + BigInt(i % 2)}`,
        at: none ? null : new Date(Date.UTC(2024, 0, 1 + (i % 4))).toISOString(),
        day: none ? null : `2024-02-0${1 + (i % 3)}`,
        flag: none ? null : i % 2 === 0,
        ref: none ? null : `00000000-0000-4000-8000-00000000000${i % 3}`,
      });
    }
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    expect(errors).toEqual([]);
  });

  async function walk(name: string, args: Record<string, unknown>, headers: HeadersInit = {}) {
    const seen: any[] = [];
    let after: string | undefined;
    for (let guard = 0; guard < 50; guard++) {
      const page = await rpc(app, name, { ...args, ...(after && { after }) }, headers);
      expect(page.status).toBe(200);
      seen.push(...page.body.items);
      if (page.body.nextCursor === null) return seen;
      after = page.body.nextCursor;
    }
    throw new Error("no last page");
  }

  it("pages by cursor over orderBy plus the key, matching the full ordered list", async () => {
    const orderBy = [{ views: "desc" }];
    const all = await rpc(app, "post.list", { orderBy, take: 10 });
    const paged = await walk("post.page", { orderBy, take: 3 });
    expect(paged.map((row) => row.id).slice(0, 10)).toEqual(all.body.map((row: any) => row.id));
    expect(paged).toHaveLength(12);
  });

  it("pages one direction over non-null columns by a row-value comparison, with the same rows", async () => {
    const orderBy = [{ views: "asc" }];
    const all = await rpc(app, "post.list", { orderBy, take: 10 });
    const paged = await walk("post.page", { orderBy, take: 3 });
    expect(paged.map((row) => row.id).slice(0, 10)).toEqual(all.body.map((row: any) => row.id));
    expect(paged).toHaveLength(12);
    const { nextCursor } = await app.db.query.post.findPage({ orderBy: [{ views: "asc" }], take: 1 });
    expect(app.db.query.post.compile({ orderBy: [{ views: "asc" }], after: nextCursor! }).sql).toMatch(/\("post"\."views", "post"\."id"\) > \(/);
  });

  it("places nulls as the list does, ascending and descending, over every orderable type", async () => {
    for (const [column, direction] of ["qty", "price", "big", "at", "day", "flag", "ref", "label"].flatMap((c) => [[c, "asc"], [c, "desc"]] as const)) {
      const orderBy = [{ [column]: direction }];
      const all = await rpc(app, "kitchen.list", { orderBy, take: 100 });
      const paged = await walk("kitchen.page", { orderBy, take: 2 });
      expect(paged.map((row) => row.id)).toEqual(all.body.map((row: any) => row.id));
    }
  });

  it("stays stable while rows are inserted and deleted between pages", async () => {
    const first = await rpc(app, "post.page", { take: 4 });
    const last = first.body.items.at(-1);
    // The last row of the page is deleted and a row before the cursor is added: neither shifts the next page.
    await app.db.deleteFrom("post").where("id", "=", last.id).execute();
    const next = await rpc(app, "post.page", { take: 4, after: first.body.nextCursor });
    expect(next.body.items.map((row: any) => row.id)).toEqual([last.id + 1, last.id + 2, last.id + 3, last.id + 4]);
    const list = await rpc(app, "post.list", { take: 2, after: first.body.nextCursor });
    expect(list.body.map((row: any) => row.id)).toEqual([last.id + 1, last.id + 2]);
  });

  it("answers 400 to a garbled cursor, and to one made for another orderBy or resource", async () => {
    const page = await rpc(app, "post.page", { take: 2 });
    for (const after of ["nope!", "e30", Buffer.from('[1,"post","id:asc",["1 or 1=1"]]').toString("base64url")]) {
      const answer = await rpc(app, "post.page", { take: 2, after });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/after: not a cursor/);
    }
    const other = await rpc(app, "post.page", { take: 2, orderBy: [{ views: "asc" }], after: page.body.nextCursor });
    expect(other).toMatchObject({ status: 400, body: { message: expect.stringMatching(/another orderBy/) } });
    const elsewhere = await rpc(app, "kitchen.page", { take: 2, after: page.body.nextCursor });
    expect(elsewhere).toMatchObject({ status: 400, body: { message: expect.stringMatching(/another table/) } });
  });

  it("takes after in the REST query string", async () => {
    const page = await rpc(app, "post.page", { take: 2 });
    const rest = await request(app, "GET", `/rest/post?take=2&after=${page.body.nextCursor}`);
    expect(rest.status).toBe(200);
    expect((rest.body as any[])[0].id).toBeGreaterThan(page.body.items[1].id);
    const restPage = await request(app, "POST", "/rest/post/page", { headers: { "content-type": "application/json" }, body: JSON.stringify({ take: 2 }) });
    expect(restPage).toMatchObject({ status: 200, body: { nextCursor: page.body.nextCursor } });
  });

  it("db.query findPage pages the same way", async () => {
    const first = await app.db.query.post.findPage({ take: 5, orderBy: [{ views: "asc" }] });
    const second = await app.db.query.post.findPage({ take: 5, orderBy: [{ views: "asc" }], after: first.nextCursor! });
    const all = await app.db.query.post.findMany({ orderBy: [{ views: "asc" }] });
    expect([...first.items, ...second.items].map((row) => row.id)).toEqual(all.slice(0, 10).map((row) => row.id));
    expectTypeOf(first.nextCursor).toEqualTypeOf<string | null>();
  });

  it("types after and the page shape on the typed client", async () => {
    const typed = client(alice);
    const page = await typed.post.page({ take: 2 });
    expectTypeOf(page.items[0]!.title).toEqualTypeOf<string>();
    expectTypeOf(page.nextCursor).toEqualTypeOf<string | null>();
    const next = await typed.post.list({ take: 2, after: page.nextCursor! });
    expect(next[0]!.id).toBeGreaterThan(page.items[1]!.id);
  });

  it("runs a batch in one transaction and answers per item", async () => {
    const { body: mine } = await rpc(app, "post.create", { title: "keep" }, as(alice));
    const typed = client(alice);
    const done = await typed.post.batch({
      create: [{ title: "b1" }, { title: "b2" }],
      update: [{ where: { id: mine.id }, data: { title: "kept" } }],
    });
    expect(done.create.map((row) => [row.title, row.authorId])).toEqual([["b1", alice.userId], ["b2", alice.userId]]);
    expect(done.update[0]).toMatchObject({ id: mine.id, title: "kept" });
    expect(done.delete).toEqual([]);
    const removed = await rpc(app, "post.batch", { delete: done.create.map((row) => ({ where: { id: row.id } })) }, as(alice));
    expect(removed.status).toBe(200);
    expect(removed.body.delete).toHaveLength(2);
    const rest = await request(app, "POST", "/rest/post/batch", { headers: { "content-type": "application/json", cookie: alice.cookie }, body: JSON.stringify({ create: [{ title: "r" }] }) });
    expect(rest).toMatchObject({ status: 200, body: { create: [{ title: "r" }] } });
  });

  it("rolls the whole batch back on a refusal and names the item with the single action's status", async () => {
    const before = await app.db.query.post.count();
    const { body: theirs } = await rpc(app, "post.create", { title: "bob's" }, as(bob));
    const refused = await rpc(app, "post.batch", { create: [{ title: "ghost" }], update: [{ where: { id: theirs.id }, data: { title: "hijack" } }] }, as(alice));
    expect(refused).toMatchObject({ status: 404, body: { code: "NOT_FOUND", message: "update[0]: No post matches", data: { action: "update", index: 0 } } });
    expect(await app.db.query.post.count()).toBe(before + 1);
    expect((await rpc(app, "post.get", { where: { id: theirs.id } })).body.title).toBe("bob's");
    const conflict = await rpc(app, "post.batch", { create: [{ title: "s1", slug: "same" }, { title: "s2", slug: "same" }] }, as(alice));
    expect(conflict).toMatchObject({ status: 409, body: { code: "CONFLICT", data: { action: "create", index: 1 } } });
    expect(conflict.body.message).toMatch(/^create\[1\]: /);
    expect(await app.db.query.post.count()).toBe(before + 1);
    expect((await rpc(app, "post.batch", { create: [{ title: "x" }] })).status).toBe(401);
  });

  it("refuses more items than the batch limit with 400", async () => {
    const create = Array.from({ length: 60 }, (_, i) => ({ title: `t${i}` }));
    const answer = await rpc(app, "post.batch", { create, update: create.map((_, i) => ({ where: { id: i + 1 }, data: { title: "x" } })) }, as(alice));
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/at most 100 items, got 120/);
  });
});
