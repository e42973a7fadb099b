import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { createFixtureApp } from "./fixture.js";

describe.each(families())("resources on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createFixtureApp>["start"]>>;
  let alice: SignedIn;
  let bob: SignedIn;
  let admin: SignedIn;
  const errors: unknown[] = [];
  const as = (user: SignedIn | null): HeadersInit => (user ? { cookie: user.cookie } : {});

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createFixtureApp(db, (error) => errors.push(error)).start();
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "bob@example.test");
    admin = await signUp(app, "root@staff.test");
    await app.db.updateTable("user").set({ role: "user,admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    expect(errors).toEqual([]);
  });

  describe("public, authenticated and owner actions", () => {
    it("lets anyone list and get, and only signed-in users create (401 otherwise)", async () => {
      expect((await rpc(app, "post.create", { title: "anon" })).status).toBe(401);
      const created = await rpc(app, "post.create", { title: "Hello" }, as(alice));
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ title: "Hello", status: "draft", views: 0, authorId: alice.userId, body: null });
      const fetched = await rpc(app, "post.get", { where: { id: created.body.id } });
      expect(fetched).toMatchObject({ status: 200, body: { id: created.body.id, title: "Hello" } });
      const listed = await rpc(app, "post.list", { where: { id: created.body.id } });
      expect(listed.body).toHaveLength(1);
    });

    it("fills ownerColumn from the session and drops a spoofed value and readonly columns", async () => {
      const created = await rpc(app, "post.create", { title: "Mine", authorId: bob.userId, secret: "injected", createdAt: "2000-01-01T00:00:00Z" }, as(alice));
      expect(created.status).toBe(200);
      expect(created.body.authorId).toBe(alice.userId);
      expect(created.body.secret).toBeNull();
      expect(new Date(created.body.createdAt).getFullYear()).toBeGreaterThan(2000);
    });

    it("lets only the owner update and delete: 404 to others, 401 signed out", async () => {
      const { body: post } = await rpc(app, "post.create", { title: "Owned" }, as(alice));
      const where = { id: post.id };
      expect((await rpc(app, "post.update", { where, data: { title: "x" } })).status).toBe(401);
      const foreign = await rpc(app, "post.update", { where, data: { title: "hijack" } }, as(bob));
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ code: "NOT_FOUND" });
      expect((await rpc(app, "post.delete", { where }, as(bob))).status).toBe(404);
      const updated = await rpc(app, "post.update", { where, data: { title: "Renamed", authorId: bob.userId } }, as(alice));
      expect(updated).toMatchObject({ status: 200, body: { title: "Renamed", authorId: alice.userId } });
      expect((await rpc(app, "post.delete", { where }, as(alice))).body).toMatchObject({ id: post.id });
      expect((await rpc(app, "post.get", { where })).status).toBe(404);
    });

    it("answers an update with nothing writable in data with 400", async () => {
      const { body: post } = await rpc(app, "post.create", { title: "Empty" }, as(alice));
      const empty = await rpc(app, "post.update", { where: { id: post.id }, data: { secret: "x", id: 99 } }, as(alice));
      expect(empty.status).toBe(400);
      expect(empty.body.message).toMatch(/Nothing to update/);
    });

    it("scopes an owner list to the caller's rows in SQL, so limits stay exact", async () => {
      for (const text of ["a1", "a2", "a3"]) await rpc(app, "note.create", { text }, as(alice));
      for (const text of ["b1", "b2"]) await rpc(app, "note.create", { text, userId: alice.userId }, as(bob));
      const mine = await rpc(app, "note.list", { take: 2, orderBy: [{ id: "asc" }] }, as(alice));
      expect(mine.body.map((n: { text: string }) => n.text)).toEqual(["a1", "a2"]);
      const bobs = await rpc(app, "note.list", {}, as(bob));
      expect(bobs.body.map((n: { text: string }) => n.text)).toEqual(["b1", "b2"]);
      expect(bobs.body.every((n: { userId: string }) => n.userId === bob.userId)).toBe(true);
      expect((await rpc(app, "note.list", {})).status).toBe(401);
      const other = await rpc(app, "note.get", { where: { id: bobs.body[0].id } }, as(alice));
      expect(other.status).toBe(404);
    });
  });

  describe("admin and function permissions", () => {
    it("requires the admin role among comma-separated roles (403), and a session (401)", async () => {
      expect((await rpc(app, "setting.create", { key: "k", value: "v" })).status).toBe(401);
      const denied = await rpc(app, "setting.create", { key: "k", value: "v" }, as(alice));
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ code: "FORBIDDEN" });
      expect((await rpc(app, "setting.create", { key: "k", value: "v" }, as(admin))).body).toEqual({ key: "k", value: "v" });
      expect((await rpc(app, "setting.get", { where: { key: "k" } }, as(admin))).status).toBe(200);
      expect((await rpc(app, "setting.list", {}, as(alice))).status).toBe(403);
    });

    it("checks 401/403 before validating input", async () => {
      expect((await rpc(app, "setting.create", { nonsense: true })).status).toBe(401);
      expect((await rpc(app, "setting.create", { nonsense: true }, as(alice))).status).toBe(403);
      expect((await rpc(app, "setting.create", { nonsense: true }, as(admin))).status).toBe(400);
    });

    it("gives function permissions the context on list/create and the row on get/update/delete", async () => {
      expect((await rpc(app, "gadget.create", { name: "anon" })).status).toBe(403);
      const { body: gadget } = await rpc(app, "gadget.create", { name: "drill", locked: true }, as(alice));
      expect(gadget.locked).toBe(false);
      expect((await rpc(app, "gadget.list", {}, as(alice))).status).toBe(403);
      expect((await rpc(app, "gadget.list", {}, as(admin))).status).toBe(200);
      await app.db.updateTable("gadget").set({ locked: true }).where("id", "=", gadget.id).execute();
      expect((await rpc(app, "gadget.get", { where: { id: gadget.id } })).status).toBe(403);
      expect((await rpc(app, "gadget.update", { where: { id: gadget.id }, data: { name: "x" } })).status).toBe(403);
      expect((await rpc(app, "gadget.delete", { where: { id: gadget.id } })).status).toBe(403);
      expect((await rpc(app, "gadget.get", { where: { id: 987654 } })).status).toBe(404);
      await app.db.updateTable("gadget").set({ locked: false }).where("id", "=", gadget.id).execute();
      expect((await rpc(app, "gadget.update", { where: { id: gadget.id }, data: { name: "saw" } })).body).toMatchObject({ name: "saw" });
      expect((await rpc(app, "gadget.delete", { where: { id: gadget.id } })).status).toBe(200);
    });
  });

  describe("list arguments", () => {
    it("applies listLimit: default rows, 400 above max take and maxSkip", async () => {
      for (let i = 0; i < 7; i++) await rpc(app, "post.create", { title: `bulk ${i}` }, as(bob));
      expect((await rpc(app, "post.list", {})).body).toHaveLength(5);
      expect((await rpc(app, "post.list", { take: 10 })).body.length).toBeGreaterThan(5);
      const tooMany = await rpc(app, "post.list", { take: 11 });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.message).toMatch(/at most 10/);
      expect((await rpc(app, "post.list", { skip: 21 })).status).toBe(400);
    });

    it("orders, and refuses unknown order columns, include names and where columns with 400", async () => {
      const ordered = await rpc(app, "post.list", { orderBy: [{ id: "desc" }], take: 3 });
      const ids = ordered.body.map((p: { id: number }) => p.id);
      expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
      expect((await rpc(app, "post.list", { orderBy: [{ nope: "asc" }] })).status).toBe(400);
      expect((await rpc(app, "post.list", { include: { author: true } })).status).toBe(400);
      const badWhere = await rpc(app, "post.list", { where: { nope: 1 } });
      expect(badWhere.status).toBe(400);
      expect(badWhere.body.message).toMatch(/nope/);
      expect((await rpc(app, "post.list", { where: { title: { regex: ".*" } } })).status).toBe(400);
    });

    it("includes declared relations: arrays for hasMany, absent when not asked", async () => {
      const { body: post } = await rpc(app, "post.create", { title: "With comments" }, as(alice));
      await rpc(app, "comment.create", { postId: post.id, body: "first" });
      await rpc(app, "comment.create", { postId: post.id, body: "second" });
      const got = await rpc(app, "post.get", { where: { id: post.id }, include: { comments: true } });
      expect(got.body.comments.map((c: { body: string }) => c.body).sort()).toEqual(["first", "second"]);
      const plain = await rpc(app, "post.get", { where: { id: post.id } });
      expect(plain.body).not.toHaveProperty("comments");
      const listed = await rpc(app, "post.list", { where: { id: post.id }, include: { comments: true } });
      expect(listed.body[0].comments).toHaveLength(2);
    });
  });

  describe("database errors", () => {
    it("maps unique and foreign-key violations to 409 without reporting them", async () => {
      await rpc(app, "post.create", { title: "one", slug: "same" }, as(alice));
      const dup = await rpc(app, "post.create", { title: "two", slug: "same" }, as(alice));
      expect(dup.status).toBe(409);
      expect(dup.body).toMatchObject({ code: "CONFLICT" });
      expect(JSON.stringify(dup.body)).not.toMatch(/insert into/i);
      const orphan = await rpc(app, "comment.create", { postId: 999999, body: "x" });
      expect(orphan.status).toBe(409);
    });

    it("answers invalid input with 400 naming the field", async () => {
      const bad = await rpc(app, "post.create", { title: 42 }, as(alice));
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/title/);
      expect((await rpc(app, "post.create", { title: "x", status: "archived" }, as(alice))).status).toBe(400);
    });
  });
});
