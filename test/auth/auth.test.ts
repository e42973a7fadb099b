import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { errorOf, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signIn, signOut, signUp, type SignedIn } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { AppPlugin } from "../../kernel/index.js";

const v1 = schema("1").auth().build();
const SECRET = "a-test-secret-that-is-long-enough-0123456789";

describe("auth", () => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<typeof start>>;
  let lookups = 0;
  let alice: SignedIn;
  let admin: SignedIn;

  /** Counts session resolutions: it taps the session hook ahead of auth and lets auth answer. */
  const counter: AppPlugin = {
    name: "session-counter",
    stage: "edge",
    build(ctx) {
      ctx.hooks.session.tap(async () => {
        lookups++;
        return undefined;
      });
    },
  };

  function start() {
    return new App({ baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind }, cors: { origins: ["https://spa.example.com"] } })
      .schema(v1)
      .use(counter)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .middleware(async ({ context, next }) => next({ context: { seenBy: context.user?.id ?? null } }))
      .procedure("whoami", (base) => base.handler(({ context }) => ({ id: context.user?.id ?? null, seenBy: context.seenBy })))
      .procedure("me", (base) => base.handler(({ context }) => {
        let reads = 0;
        for (let i = 0; i < 10; i++) if (context.user) reads++;
        return { id: context.user!.id, reads };
      }), { permission: "authenticated" })
      .procedure("ops", (base) => base.handler(() => "ops"), { permission: "admin", roles: ["ops", "admin"] })
      .procedure("vip", (base) => base.handler(() => "vip"), { permission: ({ context }) => context.user?.email.startsWith("alice") ?? false })
      .route("GET", "/route-user", (_event, context) => ({ id: context.user?.id ?? null }))
      .start();
  }

  beforeAll(async () => {
    db = await openDatabase("pglite");
    app = await start();
    alice = await signUp(app, "alice@example.test");
    admin = await signUp(app, "boss@example.test");
    await app.db.updateTable("user").set({ role: "ops" }).where("id", "=", admin.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("resolves the session once per request, however many checks read it", async () => {
    lookups = 0;
    const result = await rpc(app, "me", undefined, { cookie: alice.cookie });
    expect(result.body).toEqual({ id: alice.userId, reads: 10 });
    expect(lookups).toBe(1);
  });

  it("makes no lookup for a request without a credential", async () => {
    lookups = 0;
    expect((await rpc(app, "whoami")).body).toEqual({ id: null, seenBy: null });
    expect(lookups).toBe(0);
  });

  it("gives middleware, procedures, raw routes and client() the same user", async () => {
    expect((await rpc(app, "whoami", undefined, { cookie: alice.cookie })).body).toEqual({ id: alice.userId, seenBy: alice.userId });
    const route = await app.handle(new Request(`${ORIGIN}/route-user`, { headers: { cookie: alice.cookie } }));
    expect(await route.json()).toEqual({ id: alice.userId });
    expect(await app.client({ cookie: alice.cookie }).me()).toMatchObject({ id: alice.userId });
    await expect(app.client().me()).rejects.toMatchObject({ status: 401 });
  });

  it("applies procedure permissions: 401 signed out, 403 without a role or when a function says no", async () => {
    expect((await rpc(app, "me")).status).toBe(401);
    expect((await rpc(app, "ops", undefined, { cookie: alice.cookie })).status).toBe(403);
    expect((await rpc(app, "ops", undefined, { cookie: admin.cookie })).body).toBe("ops");
    expect((await rpc(app, "ops")).status).toBe(401);
    expect((await rpc(app, "vip", undefined, { cookie: alice.cookie })).body).toBe("vip");
    expect((await rpc(app, "vip", undefined, { cookie: admin.cookie })).status).toBe(403);
    expect((await rpc(app, "vip")).status).toBe(403);
  });

  it("accepts a comma-separated role list", async () => {
    await app.db.updateTable("user").set({ role: "user, ops" }).where("id", "=", alice.userId).execute();
    expect((await rpc(app, "ops", undefined, { cookie: alice.cookie })).status).toBe(200);
    await app.db.updateTable("user").set({ role: "user" }).where("id", "=", alice.userId).execute();
  });

  it("trusts CORS origins in the auth library", async () => {
    const response = await app.handle(
      new Request(`${ORIGIN}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://spa.example.com" },
        body: JSON.stringify({ email: "alice@example.test", password: "correct-horse-battery-staple" }),
      }),
    );
    expect(response.status).toBe(200);
    const foreign = await app.handle(
      new Request(`${ORIGIN}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://evil.example.com", cookie: alice.cookie },
        body: JSON.stringify({ email: "alice@example.test", password: "correct-horse-battery-staple" }),
      }),
    );
    expect(foreign.status).toBe(403);
  });

  it("refuses cookie-bearing writes from untrusted origins with 403, before any handler", async () => {
    const foreign = await rpc(app, "me", undefined, { cookie: alice.cookie, origin: "https://evil.example.com" });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/evil\.example\.com is not trusted/) });
    expect((await rpc(app, "me", undefined, { cookie: alice.cookie, origin: ORIGIN })).status).toBe(200);
    expect((await rpc(app, "me", undefined, { cookie: alice.cookie, origin: "https://spa.example.com" })).status).toBe(200);
    expect((await rpc(app, "me", undefined, { cookie: alice.cookie })).status).toBe(200);
    expect((await rpc(app, "whoami", undefined, { origin: "https://evil.example.com" })).status).toBe(200);
  });

  it("makes sign-out and bans effective at once", async () => {
    const carol = await signUp(app, "carol@example.test");
    expect((await rpc(app, "me", undefined, { cookie: carol.cookie })).status).toBe(200);
    expect(await signOut(app, carol.cookie)).toBe(200);
    expect((await rpc(app, "me", undefined, { cookie: carol.cookie })).status).toBe(401);

    const dave = await signUp(app, "dave@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    const banned = await app.handle(
      new Request(`${ORIGIN}/api/auth/admin/ban-user`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN, cookie: admin.cookie },
        body: JSON.stringify({ userId: dave.userId }),
      }),
    );
    expect(banned.status).toBe(200);
    expect((await rpc(app, "me", undefined, { cookie: dave.cookie })).status).toBe(401);
    await expect(signIn(app, "dave@example.test")).rejects.toThrow(/sign-in failed: 403/);
  });
});

describe("origin check with patterns and a function", () => {
  it("trusts wildcard patterns and origins a trustedOrigins function returns", async () => {
    const db = await openDatabase("pglite");
    const app = await new App({ baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind } })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true }, trustedOrigins: async () => ["https://*.tenant.example", "https://fixed.example"] })
      .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
      .start();
    try {
      const user = await signUp(app, "pat@example.test");
      const from = (origin: string) => rpc(app, "me", undefined, { cookie: user.cookie, origin });
      expect((await from("https://acme.tenant.example")).status).toBe(200);
      expect((await from("https://fixed.example")).status).toBe(200);
      expect((await from("https://tenant.example.evil.test")).status).toBe(403);
      expect((await from("https://evil.test/https://x.tenant.example")).status).toBe(403);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe("auth build rules", () => {
  it("throws without a secret", () => {
    const app = new App({ db: sqliteMemory() }).schema(v1).auth({ secret: "" });
    expect(errorOf(() => app.build())).toMatchObject({ code: "AUTH_SECRET_MISSING", plugin: "auth", hook: "validate", message: expect.stringMatching(/needs a secret/) });
  });

  it("names the tables and columns an extra auth plugin needs that the schema lacks", async () => {
    const { organization } = await import("better-auth/plugins/organization");
    const app = new App({ db: sqliteMemory() }).schema(v1).auth({ secret: SECRET, plugins: [organization()] });
    const error = errorOf(() => app.build());
    expect(error).toMatchObject({ code: "AUTH_SCHEMA_INCOMPLETE", plugin: "auth" });
    expect(error.message).toMatch(/table "organization"/);
    expect(error.message).toMatch(/session\.activeOrganizationId/);
  });

  it("throws when the schema has no auth tables", () => {
    const app = new App({ db: sqliteMemory() }).auth({ secret: SECRET });
    expect(errorOf(() => app.build())).toMatchObject({ code: "AUTH_SCHEMA_MISSING", plugin: "auth", message: expect.stringMatching(/call \.auth\(\) on the schema/) });
  });

  it("leaves user and session null without .auth()", async () => {
    const app = new App({ db: sqliteMemory() }).procedure("who", (base) => base.handler(({ context }) => [context.user, context.session])).build();
    expect((await rpc(app, "who", undefined, { cookie: "better-auth.session_token=abc" })).body).toEqual([null, null]);
    await app.close();
  });

  it("refuses resources with non-public permissions without .auth(), listing them", () => {
    const app = new App({ db: sqliteMemory() })
      .schema(schema("1").auth().table("post", (t) => ({ id: t.serial().primaryKey(), authorId: t.text() })).build())
      .resource("post", { ownerColumn: "authorId", permissions: { create: "authenticated", delete: "owner" } });
    expect(() => app.build()).toThrow(/resource "post" create \(permission "authenticated"\); resource "post" delete \(permission "owner"\)/);
  });
});
