/**
 * `{name}.batch` over `batchLimit` answers 400 `A batch holds at most <limit> items, got <n>`
 * (docs/resources.md). It did only when the kinds together passed the limit: one list alone over it
 * (120 creates, the documented example) was refused by the input schema with zod's generic
 * `Too big: expected array to have <=100 items`, which names neither the batch nor its limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { createFixtureApp } from "../resources/fixture.js";

describe("batch limit, one list over it", () => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createFixtureApp>["start"]>>;
  let alice: SignedIn;

  beforeAll(async () => {
    db = await openDatabase("sqlite");
    app = await createFixtureApp(db, () => {}).start();
    alice = await signUp(app, "alice@example.test");
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("names the limit and the count, as for several kinds together", async () => {
    const before = await app.db.query.post.count();
    const create = Array.from({ length: 120 }, (_, i) => ({ title: `t${i}` }));
    const answer = await rpc(app, "post.batch", { create }, { cookie: alice.cookie });
    expect([answer.status, answer.body.code]).toEqual([400, "BAD_REQUEST"]);
    expect(answer.body.message).toContain("A batch holds at most 100 items, got 120");
    expect(await app.db.query.post.count()).toBe(before);
    // Exactly at the limit it runs.
    const full = await rpc(app, "post.batch", { create: create.slice(0, 100) }, { cookie: alice.cookie });
    expect(full.status).toBe(200);
    expect(await app.db.query.post.count()).toBe(before + 100);
  });
});
