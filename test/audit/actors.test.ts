// The writers the audit log tells apart beyond a plain session: a job's handler, an API key's user,
// and an administrator impersonating someone; and the retention sweep scheduled as a cron job.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { waitFor } from "../jobs/support.js";
import { testApp } from "../../presets/testing.js";

const v1 = schema("1")
  .auth({ apiKeys: true })
  .table("note", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .build();

describe("audit actors: job, API key, impersonation (embedded)", () => {
  let app: any;
  let admin: SignedIn;
  let alice: SignedIn;
  const entries = async (input: Record<string, unknown>) => (await rpc(app, "_admin.audit.list", input, { cookie: admin.cookie })).body.entries as any[];
  const post = (path: string, cookie: string, body: unknown) =>
    app.handle(new Request(`${ORIGIN}${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, cookie }, body: JSON.stringify(body) }));

  beforeAll(async () => {
    const t = await testApp((input) =>
      new App({ baseUrl: ORIGIN, db: input.db, onError: () => {} })
        .schema(v1)
        .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
        .jobs({ pollingInterval: 0.5 })
        .job("note.write", { input: z.object({ title: z.string() }) }, async ({ data, context }) => {
          await context.db.insertInto("note").values({ title: data.title }).execute();
        })
        .procedure("note.later", (base) => base.input(z.object({ title: z.string() })).handler(({ input, context }) => context.jobs.send("note.write", input)))
        .resource("note", { permissions: { list: "public", get: "public", create: "authenticated", update: "authenticated", delete: "authenticated" } })
        .audit({ retain: "30d" })
        .admin(),
    );
    app = t.app;
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    alice = await signUp(app, "alice@example.test");
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it("records a job's writes as the job's, under its name", async () => {
    expect((await rpc(app, "note.later", { title: "from a job" }, { cookie: alice.cookie })).status).toBe(200);
    await waitFor("the job's insert", async () => (await entries({ table: "note", actorKind: "job" })).length > 0);
    const [entry] = await entries({ table: "note", actorKind: "job" });
    expect(entry).toMatchObject({ op: "insert", source: "job", job: "note.write", actor: { kind: "job", userId: null }, after: { title: "from a job" } });
  });

  it("records an API key's writes as apiKey, with the key's user", async () => {
    const created = await post("/api/auth/api-key/create", alice.cookie, { name: "ci" });
    expect(created.status).toBe(200);
    const { key } = (await created.json()) as { key: string };
    const { body } = await rpc(app, "note.create", { title: "by key" }, { "x-api-key": key });
    const [entry] = await entries({ table: "note", key: String(body.id) });
    expect(entry.actor).toEqual({ kind: "apiKey", userId: alice.userId, impersonatorId: null });
    // The key itself is a credential: its row's entry never holds it.
    const [keyEntry] = await entries({ table: "apikey", take: 1 });
    expect(keyEntry.after.key).toBe("[redacted]");
    expect(JSON.stringify(keyEntry)).not.toContain(key);
  });

  it("records an impersonated session as the user, with the administrator beside", async () => {
    const response = await post("/api/auth/admin/impersonate-user", admin.cookie, { userId: alice.userId });
    expect(response.status).toBe(200);
    const jar = new Map(response.headers.getSetCookie().map((line: string) => line.split(";")[0]!.split(/=(.*)/s).slice(0, 2) as [string, string]));
    const cookie = [...jar].filter(([, value]) => value).map(([name, value]) => `${name}=${value}`).join("; ");
    const { body } = await rpc(app, "note.create", { title: "as alice" }, { cookie });
    const [entry] = await entries({ table: "note", key: String(body.id) });
    expect(entry.actor).toEqual({ kind: "user", userId: alice.userId, impersonatorId: admin.userId });
    // What the administrator did while impersonating is part of their activity.
    expect((await entries({ actor: admin.userId, table: "note" })).map((e) => e.key)).toContain(String(body.id));
  });

  it("schedules the retention sweep as a cron job", async () => {
    const queues = await app.sealed.service("jobs").queues();
    expect(queues.map((queue: { name: string }) => queue.name)).toContain("audit.retain");
  });
});
