/**
 * Status precedence (401 signed out, then 403 missing role, then 400 bad input) held on every
 * generated procedure but `{name}.batch`: it validated its input before its gates, so a signed-out
 * caller with a malformed batch got a 400 describing the table's columns instead of a 401, and a
 * signed-in caller without the role got a 400 instead of a 403.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { createFixtureApp } from "../resources/fixture.js";

describe("batch gates before its input", () => {
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
});
