// Cursor pages and batch writes under owner scope: a cursor is a position, never a key to rows, and a
// batch is as strict as its strictest item.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { createFixtureApp } from "../resources/fixture.js";

describe.each(families())("cursor and batch red team on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createFixtureApp>["start"]>>;
  let alice: SignedIn;
  let bob: SignedIn;
  const errors: unknown[] = [];
  const as = (user: SignedIn): HeadersInit => ({ cookie: user.cookie });
  const cursor = (values: unknown[], table = "note", order = "id:asc") => Buffer.from(JSON.stringify([1, table, order, values])).toString("base64url");

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createFixtureApp(db, (error) => errors.push(error)).start();
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "bob@example.test");
    for (let i = 0; i < 4; i++) {
      await rpc(app, "note.create", { text: `alice ${i}` }, as(alice));
      await rpc(app, "note.create", { text: `bob ${i}` }, as(bob));
    }
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    expect(errors).toEqual([]);
  });

  it("a cursor from another user's pages reveals none of their rows", async () => {
    const bobs = await rpc(app, "note.page", { take: 1 }, as(bob));
    expect(bobs.body.items[0].text).toBe("bob 0");
    const replayed = await rpc(app, "note.page", { take: 10, after: bobs.body.nextCursor }, as(alice));
    expect(replayed.status).toBe(200);
    expect(replayed.body.items.length).toBeGreaterThan(0);
    expect(replayed.body.items.every((row: any) => row.userId === alice.userId)).toBe(true);
  });

  it("a forged cursor is a 400, never SQL, and a valid-looking one only moves the position", async () => {
    const forged = [
      cursor(["1) or (1=1"]),
      cursor([{ raw: "1" }]),
      cursor([null]),
      cursor([1, 2]),
      cursor([1], "post"),
      cursor([1], "note", "text:asc,id:asc"),
      "A".repeat(20_000),
      "%27%20or%201=1",
    ];
    for (const after of forged) {
      const answer = await rpc(app, "note.page", { take: 10, after }, as(alice));
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("BAD_REQUEST");
    }
    const moved = await rpc(app, "note.list", { take: 10, after: cursor([0]) }, as(alice));
    expect(moved.body.map((row: any) => row.text)).toEqual(["alice 0", "alice 1", "alice 2", "alice 3"]);
  });

  it("a batch touching another user's row rolls back entirely and answers the 404 the single update would", async () => {
    const { body: theirs } = await rpc(app, "note.list", { take: 1 }, as(bob));
    const { body: mine } = await rpc(app, "note.list", { take: 1 }, as(alice));
    const before = await app.db.query.note.count();
    const answer = await rpc(
      app,
      "note.batch",
      { create: [{ text: "new" }], update: [{ where: { id: mine[0].id }, data: { text: "changed" } }], delete: [{ where: { id: theirs[0].id } }] },
      as(alice),
    );
    expect(answer).toMatchObject({ status: 404, body: { code: "NOT_FOUND", message: "delete[0]: No note matches", data: { action: "delete", index: 0 } } });
    expect(await app.db.query.note.count()).toBe(before);
    expect((await rpc(app, "note.get", { where: { id: mine[0].id } }, as(alice))).body.text).toBe(mine[0].text);
    expect((await rpc(app, "note.get", { where: { id: theirs[0].id } }, as(bob))).status).toBe(200);
  });

  it("a missing row and another user's row answer alike (404, no existence leak)", async () => {
    const { body: theirs } = await rpc(app, "note.list", { take: 1 }, as(bob));
    const foreign = await rpc(app, "note.batch", { update: [{ where: { id: theirs[0].id }, data: { text: "x" } }] }, as(alice));
    const missing = await rpc(app, "note.batch", { update: [{ where: { id: 999_999 }, data: { text: "x" } }] }, as(alice));
    expect(foreign.status).toBe(404);
    expect(missing.body).toEqual(foreign.body);
  });

  it("a batch of function-permission writes asks the function per row and rolls back on its 403", async () => {
    const { body: open } = await rpc(app, "gadget.create", { name: "open" }, as(alice));
    const { body: locked } = await rpc(app, "gadget.create", { name: "locked" }, as(alice));
    await app.db.updateTable("gadget").set({ locked: true }).where("id", "=", locked.id).execute();
    const answer = await rpc(app, "gadget.batch", { update: [{ where: { id: open.id }, data: { name: "renamed" } }, { where: { id: locked.id }, data: { name: "x" } }] }, as(alice));
    expect(answer).toMatchObject({ status: 403, body: { code: "FORBIDDEN", message: "update[1]: Permission denied" } });
    expect((await app.db.query.gadget.findFirst({ where: { id: open.id } }))!.name).toBe("open");
  });
});
