import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { embedded } from "../../kernel/embedded/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { waitFor } from "./support.js";
import { announce } from "../../presets/banner.js";

const v1 = schema("1").auth().build();

describe("_admin.jobs.* (embedded)", () => {
  let app: any;
  let admin: SignedIn;
  let alice: SignedIn;
  let failedId: string;
  let waitingId: string;
  const call = (name: string, input?: unknown, who: SignedIn | null = admin) => rpc(app, `_admin.jobs.${name}`, input, who ? { cookie: who.cookie } : {});

  beforeAll(async () => {
    app = await new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: () => undefined })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .admin({ ui: false })
      .jobs({ pollingInterval: 0.5 })
      .job("broken", { retry: 0 }, () => {
        throw new Error("the receiver is down");
      })
      .job("later", {}, () => undefined)
      .cron("cleanup", "0 3 * * *", () => undefined, { tz: "Europe/Paris" })
      .start();
    admin = await signUp(app, "admin@example.test");
    alice = await signUp(app, "alice@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    const jobs = app.sealed.service("jobs");
    failedId = await jobs.send("broken", { to: "x" });
    waitingId = await jobs.send("later", {}, { startAfter: 3600 });
    await waitFor("the failure", async () => (await jobs.get("broken", failedId))?.state === "failed");
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it("answers 401 signed out and 403 without an admin role, before validating input", async () => {
    for (const [name, input] of [["queues", undefined], ["failed", { queue: 1 }], ["retry", {}], ["cancel", { queue: "nope", id: "x" }]] as const) {
      expect((await call(name, input, null)).status).toBe(401);
      expect((await call(name, input, alice)).status).toBe(403);
    }
  });

  it("lists queues with their kind, schedule and counts by state, and the totals", async () => {
    const { status, body } = await call("queues");
    expect(status).toBe(200);
    expect(body).toEqual([
      expect.objectContaining({ name: "broken", kind: "job", cron: null, counts: expect.objectContaining({ failed: 1 }) }),
      expect.objectContaining({ name: "later", kind: "job", counts: expect.objectContaining({ created: 1 }) }),
      expect.objectContaining({ name: "cleanup", kind: "cron", cron: "0 3 * * *", tz: "Europe/Paris" }),
    ]);
    const counts = await call("counts");
    expect(counts.body).toMatchObject({ failed: 1, created: 1 });
  });

  it("lists failed jobs with their error and attempts", async () => {
    const { status, body } = await call("failed", {});
    expect(status).toBe(200);
    expect(body).toEqual([expect.objectContaining({ id: failedId, queue: "broken", state: "failed", error: "the receiver is down", attempts: 1, maxAttempts: 1, data: { to: "x" } })]);
    expect((await call("failed", { queue: "nope" })).status).toBe(400);
  });

  it("retries a failed job (409 for one that is not failed, 404 for none)", async () => {
    expect((await call("retry", { queue: "later", id: waitingId })).status).toBe(409);
    expect((await call("retry", { queue: "broken", id: "00000000-0000-0000-0000-000000000000" })).status).toBe(404);
    const retried = await call("retry", { queue: "broken", id: failedId });
    expect(retried.status).toBe(200);
    expect(retried.body.state).toBe("retry");
    await waitFor("the second failure", async () => (await call("get", { queue: "broken", id: failedId })).body.attempts === 2);
  });

  it("cancels a waiting job (409 once it ended)", async () => {
    const cancelled = await call("cancel", { queue: "later", id: waitingId });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe("cancelled");
    expect((await call("cancel", { queue: "later", id: waitingId })).status).toBe(409);
  });

  it("the start banner lists the queues and the schedules", () => {
    const text = announce(app, "http://localhost:3000", () => undefined);
    expect(text).toMatch(/\n  queues\s+broken, later, cleanup\n/);
    expect(text).toMatch(/\n  schedules\s+cleanup "0 3 \* \* \*" Europe\/Paris/);
  });
});
