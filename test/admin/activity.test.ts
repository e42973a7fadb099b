// `_admin.activity`: the last requests of this replica, recorded by the admin plugin's middleware.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { adminApp } from "./fixture.js";

function activityApp(activity?: number | false) {
  return adminApp(sqliteMemory(), activity === undefined ? {} : { activity })
    .procedure("explode", (base) => base.handler((): string => {
      throw new Error("the disk is on fire");
    }))
    .route("GET", "/boom", () => {
      throw new Error("route failed");
    });
}

describe("_admin.activity", () => {
  let app: Awaited<ReturnType<ReturnType<typeof activityApp>["start"]>>;
  let admin: SignedIn;
  let alice: SignedIn;
  const activity = (input?: unknown, who: SignedIn | null = admin) => rpc(app, "_admin.activity", input, who ? { cookie: who.cookie } : {});

  beforeAll(async () => {
    app = await activityApp(5).start();
    admin = await signUp(app, "admin@example.test");
    alice = await signUp(app, "alice@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(() => app?.close());

  it("is refused signed out (401) and without the role (403), before validation", async () => {
    expect((await activity({ take: "lots" }, null)).status).toBe(401);
    expect((await activity({ take: "lots" }, alice)).status).toBe(403);
    expect((await activity({ take: "lots" })).status).toBe(400);
  });

  it("lists the last requests newest first (its own polling left out), with status, duration, user and request id; bounded; filterable", async () => {
    const listed = await rpc(app, "post.list", {}, { cookie: alice.cookie, "x-request-id": "req-alice-1" });
    expect(listed.status).toBe(200);
    const failed = await rpc(app, "explode", {}, { "x-request-id": "req-boom-1" });
    expect(failed.status).toBe(500);
    expect(JSON.stringify(failed.body)).not.toContain("fire");
    expect((await app.handle(new Request(`${ORIGIN}/boom`, { headers: { "x-request-id": "req-route-1" } }))).status).toBe(500);
    expect((await app.handle(new Request(`${ORIGIN}/nowhere`))).status).toBe(404);

    const { status, body } = await activity();
    expect(status).toBe(200);
    expect(body.capacity).toBe(5);
    expect(body.entries).toHaveLength(5);
    expect(body.entries.map((e: any) => e.path)).toEqual(["/nowhere", "/boom", "/rpc/explode", "/rpc/post/list", "/api/auth/sign-up/email"]);
    const [notFound, route, explode, list] = body.entries;
    expect(notFound).toMatchObject({ method: "GET", status: 404, error: null, userId: null });
    expect(route).toMatchObject({ status: 500, requestId: "req-route-1", error: "route failed" });
    expect(explode).toMatchObject({ method: "POST", status: 500, requestId: "req-boom-1", error: "the disk is on fire" });
    expect(list).toMatchObject({ status: 200, requestId: "req-alice-1", userId: alice.userId, error: null });
    expect(typeof list.ms).toBe("number");
    expect(body.entries[0].seq).toBeGreaterThan(body.entries[1].seq);

    expect((await activity({ status: 5 })).body.entries.map((e: any) => e.path)).toEqual(["/boom", "/rpc/explode"]);
    expect((await activity({ status: 404 })).body.entries.map((e: any) => e.path)).toEqual(["/nowhere"]);
    expect((await activity({ path: "post" })).body.entries.map((e: any) => e.requestId)).toEqual(["req-alice-1"]);
    expect((await activity({ after: notFound.seq })).body.entries).toEqual([]);
  });

  it("records nothing with activity: false", async () => {
    const quiet = await activityApp(false).start();
    try {
      const boss = await signUp(quiet, "boss@example.test");
      await quiet.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
      expect((await rpc(quiet, "_admin.activity", {}, { cookie: boss.cookie })).body).toEqual({ capacity: 0, entries: [] });
    } finally {
      await quiet.close();
    }
  });
});
