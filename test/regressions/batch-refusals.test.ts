/**
 * `{name}.batch`'s refusals, as docs/resources.md gives them.
 *
 * Status precedence (401 signed out, then 403 missing role, then 400 bad input) held on every
 * generated procedure but `{name}.batch`: it validated its input before its gates, so a signed-out
 * caller with a malformed batch got a 400 describing the table's columns instead of a 401, and a
 * signed-in caller without the role got a 400 instead of a 403.
 *
 * Over `batchLimit` it answers 400 `A batch holds at most <limit> items, got <n>`. It did only when
 * the kinds together passed the limit: one list alone over it (120 creates, the documented example)
 * was refused by the input schema with zod's generic `Too big: expected array to have <=100 items`,
 * which names neither the batch nor its limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { createFixtureApp } from "../resources/fixture.js";

describe("batch refusals", () => {
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

  it("answers 401, then 403, then 400, as the single procedures do", async () => {
    const bad = { create: [{ title: 42, nosuch: true }] };
    const signedOut = await rpc(app, "post.batch", bad);
    expect([signedOut.status, signedOut.body.code]).toEqual([401, "UNAUTHORIZED"]);
    // The single create agrees.
    expect((await rpc(app, "post.create", bad.create[0])).status).toBe(401);

    const noRole = await rpc(app, "setting.batch", { delete: [{ where: "not an object" }] }, { cookie: alice.cookie });
    expect([noRole.status, noRole.body.code]).toEqual([403, "FORBIDDEN"]);

    const invalid = await rpc(app, "post.batch", bad, { cookie: alice.cookie });
    expect([invalid.status, invalid.body.code]).toEqual([400, "BAD_REQUEST"]);
    // A batch that is not even an object is a 400 for anyone: no action in it names a rule.
    expect((await rpc(app, "post.batch", "nonsense")).status).toBe(400);
  });

  it("names the limit and the count when one list is over it, as for several kinds together", async () => {
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
