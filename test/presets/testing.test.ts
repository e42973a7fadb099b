import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { App, RpcError } from "trellis";
import { schema } from "trellis/schema";
import { createServer } from "node:net";
import { serve } from "trellis/node";
import { connect, testApp, type TestApp, type TestAppInput } from "trellis/testing";

const v1 = schema("1")
  .auth()
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    body: t.text(),
    ownerId: t.text().references("user", "id", { onDelete: "cascade" }),
  }))
  .build();

/** Notes counted by a job, so `t.jobs.drain()` has something to run. */
const counted: string[] = [];

function createApp({ db, secret }: TestAppInput, baseUrl = "http://localhost:3000") {
  return new App({ name: "notes", baseUrl, db })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .admin()
    .mail({ from: "Notes <no-reply@example.test>" })
    .resource("note", { ownerColumn: "ownerId", permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } })
    .job("note.count", { input: z.object({ body: z.string() }), retry: 0 }, ({ data }) => void counted.push(data.body))
    .procedure("whoami", (base) => base.handler(({ context }) => context.user?.email ?? null))
    .procedure("count", (base) => base.input(z.object({ body: z.string() })).handler(async ({ input, context }) => context.jobs.send("note.count", input)));
}

let t: TestApp<typeof createApp> | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("trellis/testing", () => {
  // The file's first app migrates its schema (jobs' tables included) unless a run before left its dump: a wider bound.
  it("gives each signed-up user a typed client and a fetch carrying their session", { timeout: 90_000 }, async () => {
    const app = await testApp(createApp);
    t = app;
    const ada = await app.signUp({ email: "ada@example.com" });
    const bob = await app.signUp();
    expect(ada.user.email).toBe("ada@example.com");
    expect(await ada.client.whoami()).toBe("ada@example.com");

    const note = await ada.client.note.create({ body: "mine" });
    expect(note).toMatchObject({ body: "mine", ownerId: ada.user.id });
    expect(await bob.client.note.list({})).toEqual([]);

    const viaFetch = await ada.fetch("/rpc/note/list", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(viaFetch.status).toBe(200);
    expect((await viaFetch.json()).json).toHaveLength(1);

    await expect(app.anonymous.client.note.create({ body: "x" })).rejects.toMatchObject({ status: 401 });
    await expect(bob.client.note.get({ where: { id: note.id } })).rejects.toBeInstanceOf(RpcError);
  });

  it("signs an existing user in again, and makes admins", async () => {
    const app = await testApp(createApp);
    t = app;
    await app.signUp({ email: "cy@example.com", password: "a-long-enough-password" });
    const again = await app.signIn("cy@example.com", "a-long-enough-password");
    expect(await again.client.whoami()).toBe("cy@example.com");
    await expect(again.client._admin.meta()).rejects.toMatchObject({ status: 403 });

    const admin = await app.asAdmin();
    expect(admin.user.role).toBe("admin");
    expect((await admin.client._admin.meta()).name).toBe("notes");
    await expect(app.signIn("cy@example.com", "wrong-password")).rejects.toThrow(/sign-in\/email for cy@example.com answered 401/);
  });

  it("connect(url) signs in from Node against a served app", async () => {
    // Served at its own base URL: the origin checks trust that one, as in production.
    const port = await freePort();
    const app = await testApp((input: TestAppInput) => createApp(input, `http://localhost:${port}`));
    t = app;
    const server = await serve(app.app, { port, handleSignals: false, banner: false });
    try {
      const remote = connect(`http://localhost:${port}`);
      const dee = await remote.signUp({ email: "dee@example.com" });
      expect(await dee.client.whoami()).toBe("dee@example.com");
      await dee.client.note.create({ body: "over http" });
      expect(await dee.client.note.list({})).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => server.server.close(() => resolve()));
    }
  });

  describe("each test's own database", () => {
    // The two tests run in order: the second must not see what the first wrote.
    it("writes a user and a note", async () => {
      t = await testApp(createApp);
      const ada = await t.signUp({ email: "same@example.com" });
      const note = await ada.client.note.create({ body: "first test" });
      expect(note.id).toBe(1);
      expect(await t.app.db.selectFrom("note").select("id").execute()).toHaveLength(1);
    });

    it("starts from the migrated schema again: no user, no note, sequences rewound", async () => {
      t = await testApp(createApp);
      expect(await t.app.db.selectFrom("note").select("id").execute()).toEqual([]);
      expect(await t.app.db.selectFrom("user").select("id").execute()).toEqual([]);
      const ada = await t.signUp({ email: "same@example.com" });
      expect((await ada.client.note.create({ body: "second test" })).id).toBe(1);
      expect((await t.app.sealed.migrations()).map(({ version }) => version)).toEqual(["1"]);
    });

    it("two apps open at once have a database each", async () => {
      t = await testApp(createApp);
      const other = await testApp(createApp);
      try {
        await t.signUp({ email: "only-here@example.com" });
        expect(await other.app.db.selectFrom("user").select("id").execute()).toEqual([]);
      } finally {
        await other.close();
      }
    });
  });

  it("t.outbox() reads the mail the app sent, and t.jobs.drain() runs queued jobs now", async () => {
    t = await testApp(createApp);
    const ada = await t.signUp({ email: "reset-me@example.com" });
    const asked = await t.anonymous.fetch("/api/auth/request-password-reset", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "reset-me@example.com", redirectTo: "/reset" }),
    });
    expect(asked.status).toBe(200);
    const [mail] = await t.outbox({ to: "reset-me@example.com" });
    expect(mail).toMatchObject({ kind: "reset-password", to: "reset-me@example.com", link: expect.stringContaining("/reset-password/") });
    expect(await t.outbox({ to: "nobody@example.com" })).toEqual([]);

    counted.length = 0;
    await ada.client.count({ body: "one" });
    await ada.client.count({ body: "two" });
    await t.jobs.drain();
    expect(counted.sort()).toEqual(["one", "two"]);
  });

  it("keeps the auth library's origin check on under the test runner: a cookie POST from a foreign Origin is 403", async () => {
    t = await testApp(createApp);
    const ada = await t.signUp();
    const foreign = await ada.fetch("/api/auth/update-user", {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://evil.example.com" },
      body: JSON.stringify({ name: "renamed" }),
    });
    expect(foreign.status).toBe(403);
    const callback = await t.anonymous.fetch("/api/auth/sign-in/email", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: ada.user.email, password: "correct-horse-battery-staple", callbackURL: "https://evil.example.com/steal" }),
    });
    // The auth library's own check, which it skips under NODE_ENV=test unless told otherwise.
    expect(callback.status).toBe(403);
    expect(await callback.json()).toMatchObject({ code: "INVALID_CALLBACK_URL" });
    const own = await ada.fetch("/api/auth/update-user", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "renamed" }) });
    expect(own.status).toBe(200);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
