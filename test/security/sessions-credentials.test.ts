// Sessions and credentials: who the caller is, for every credential a request can carry.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import Database from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { sqliteDialect } from "../../kernel/db/dialect/index.js";
import { rpc as call } from "../support/app.js";
import { ORIGIN, cookieOf, signIn, signOut, signUp, type SignedIn } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1").auth({ apiKeys: true }).build();

function createApp(session?: { cookieCache: { enabled: true; maxAge: number } }) {
  const database = new Database(":memory:") as unknown as SqliteDatabase;
  return new App({ baseUrl: ORIGIN, db: { dialect: sqliteDialect({ database }), kind: "sqlite" } })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true }, ...(session ? { session } : {}) })
    .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
    .procedure("whoami", (base) => base.handler(({ context }) => context.user?.id ?? null))
    .procedure("staff", (base) => base.handler(() => "staff"), { permission: "admin" })
    .route("GET", "/route-user", (_event, context) => ({ id: context.user?.id ?? null }));
}

type Built = Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;

/** `rpc` from the support helpers, with a `null` output kept as `null`. */
async function rpc(app: Built, name: string, input: unknown, headers: Record<string, string>) {
  const result = await call(app, name, input, headers);
  return { ...result, body: result.body && typeof result.body === "object" && "json" in result.body ? result.body.json : result.body };
}

async function auth(app: Built, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await app.handle(
    new Request(`${ORIGIN}/api/auth${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { origin: ORIGIN, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function createKey(app: Built, user: SignedIn): Promise<string> {
  const created = await auth(app, "/api-key/create", { cookie: user.cookie }, { name: "ci" });
  expect(created.status).toBe(200);
  return created.body.key;
}

describe("sessions and credentials", () => {
  let app: Built;
  let admin: SignedIn;
  beforeAll(async () => {
    app = await createApp().start();
    admin = await signUp(app, "root@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(() => app?.close());

  const ban = async (userId: string, extra: Record<string, unknown> = {}) =>
    expect((await auth(app, "/admin/ban-user", { cookie: admin.cookie }, { userId, ...extra })).status).toBe(200);
  const unban = async (userId: string) => expect((await auth(app, "/admin/unban-user", { cookie: admin.cookie }, { userId })).status).toBe(200);
  /** Who each Trellis surface sees for these headers: RPC, a raw route and the in-process client. */
  const seenBy = async (headers: Record<string, string>) => ({
    rpc: (await rpc(app, "whoami", undefined, headers)).body,
    route: ((await (await app.handle(new Request(`${ORIGIN}/route-user`, { headers }))).json()) as { id: string | null }).id,
    client: await app.client(headers).whoami(),
    guarded: (await rpc(app, "me", undefined, headers)).status,
  });

  describe("a ban signs the user out of every credential, on the next request", () => {
    let eve: SignedIn;
    let key: string;
    beforeAll(async () => {
      eve = await signUp(app, "eve@example.test");
      key = await createKey(app, eve);
    });

    it("takes the cookie, the API key and in-process client headers away at once, on every surface", async () => {
      const signedIn = { rpc: eve.userId, route: eve.userId, client: eve.userId, guarded: 200 };
      expect(await seenBy({ cookie: eve.cookie })).toEqual(signedIn);
      expect(await seenBy({ "x-api-key": key })).toEqual(signedIn);

      await ban(eve.userId);
      const signedOut = { rpc: null, route: null, client: null, guarded: 401 };
      expect(await seenBy({ cookie: eve.cookie })).toEqual(signedOut);
      expect(await seenBy({ "x-api-key": key })).toEqual(signedOut);
      await expect(app.client({ "x-api-key": key }).me()).rejects.toMatchObject({ status: 401 });
    });

    it("signs the API key out of the auth library's own endpoints too: no session, no new key", async () => {
      expect((await auth(app, "/get-session", { "x-api-key": key })).body).toBeNull();
      expect((await auth(app, "/api-key/create", { "x-api-key": key }, { name: "escape" })).status).toBe(401);
      expect((await auth(app, "/update-user", { "x-api-key": key }, { name: "renamed" })).status).toBe(401);
      const name = await app.db.selectFrom("user").select("name").where("id", "=", eve.userId).executeTakeFirstOrThrow();
      expect(name.name).toBe("eve");
      expect(await app.db.selectFrom("apikey").select("id").where("referenceId", "=", eve.userId).execute()).toHaveLength(1);
    });

    it("refuses a banned user's sign-in, and gives the key back when the ban is lifted", async () => {
      await expect(signIn(app, "eve@example.test")).rejects.toThrow(/sign-in failed: 403/);
      await unban(eve.userId);
      expect((await rpc(app, "me", undefined, { "x-api-key": key })).body).toBe(eve.userId);
      // The ban ended the cookie sessions for good: signing in again is the way back.
      expect((await rpc(app, "me", undefined, { cookie: eve.cookie })).status).toBe(401);
    });

    it("holds a ban until banExpires, and no longer", async () => {
      const setBan = (banExpires: Date | null) =>
        app.db.updateTable("user").set({ banned: true, banExpires }).where("id", "=", eve.userId).execute();
      await setBan(new Date(Date.now() + 60_000));
      expect((await rpc(app, "whoami", undefined, { "x-api-key": key })).body).toBeNull();
      await setBan(new Date(Date.now() - 1000));
      expect((await rpc(app, "whoami", undefined, { "x-api-key": key })).body).toBe(eve.userId);
      await app.db.updateTable("user").set({ banned: false, banExpires: null }).where("id", "=", eve.userId).execute();
    });

    it("honours a ban written straight to the user table, which leaves the sessions in place", async () => {
      const mallory = await signUp(app, "mallory@example.test");
      await app.db.updateTable("user").set({ banned: true }).where("id", "=", mallory.userId).execute();
      expect(await seenBy({ cookie: mallory.cookie })).toEqual({ rpc: null, route: null, client: null, guarded: 401 });
      expect((await auth(app, "/get-session", { cookie: mallory.cookie })).body).toBeNull();
      expect((await auth(app, "/update-user", { cookie: mallory.cookie }, { name: "still here" })).status).toBe(401);
    });
  });

  describe("forged, stale and misplaced credentials (these already hold)", () => {
    let ada: SignedIn;
    beforeAll(async () => {
      ada = await signUp(app, "ada@example.test");
    });

    it("treats a made-up or tampered session cookie as signed out", async () => {
      const [name, value] = ada.cookie.split(";")[0]!.split("=") as [string, string];
      const tampered = `${name}=${value.slice(0, -3)}${value.endsWith("abc") ? "xyz" : "abc"}`;
      for (const cookie of [`${name}=forged.value`, tampered, `${name}=`, "better-auth.session_data=eyJ9"]) {
        expect(await seenBy({ cookie })).toEqual({ rpc: null, route: null, client: null, guarded: 401 });
      }
    });

    it("does not accept the session token as a bearer token or an API key", async () => {
      const token = decodeURIComponent(ada.cookie.split(";")[0]!.split("=")[1]!).split(".")[0]!;
      expect((await rpc(app, "whoami", undefined, { authorization: `Bearer ${token}` })).body).toBeNull();
      expect((await rpc(app, "whoami", undefined, { "x-api-key": token })).status).toBe(403);
    });

    it("refuses a wrong API key even on a public procedure, never as someone else: 403 malformed, 401 unknown", async () => {
      expect((await rpc(app, "whoami", undefined, { "x-api-key": "short" })).body).toMatchObject({ code: "FORBIDDEN", status: 403 });
      const unknown = await rpc(app, "whoami", undefined, { "x-api-key": "x".repeat(64) });
      expect(unknown).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED", message: "Invalid API key." } });
    });

    it("ends a signed-out session on the next request", async () => {
      const session = await signIn(app, "ada@example.test");
      expect((await rpc(app, "me", undefined, { cookie: session.cookie })).status).toBe(200);
      expect(await signOut(app, session.cookie)).toBe(200);
      expect((await rpc(app, "me", undefined, { cookie: session.cookie })).status).toBe(401);
    });

    it("does not let a second credential override the first: a good cookie with a wrong key is refused", async () => {
      const both = await rpc(app, "whoami", undefined, { cookie: ada.cookie, "x-api-key": "y".repeat(64) });
      expect(both.status).toBe(401);
    });
  });
});

describe("sessions under better-auth's cookie cache", () => {
  let app: Built;
  let admin: SignedIn;
  beforeAll(async () => {
    app = await createApp({ cookieCache: { enabled: true, maxAge: 300 } }).start();
    admin = await signUp(app, "root@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(() => app?.close());

  /** A cookie holding the session cache too, as a browser would after any auth call. */
  const cached = async (user: SignedIn) => {
    const primed = await app.handle(new Request(`${ORIGIN}/api/auth/get-session`, { headers: { cookie: user.cookie } }));
    const cookie = [user.cookie, cookieOf(primed)].filter(Boolean).join("; ");
    expect(cookie).toMatch(/session_data=/);
    return cookie;
  };

  it("applies a ban on the next request although the cached session is still valid", async () => {
    const eve = await signUp(app, "eve@example.test");
    const cookie = await cached(eve);
    expect((await rpc(app, "me", undefined, { cookie })).body).toBe(eve.userId);
    expect((await auth(app, "/admin/ban-user", { cookie: admin.cookie }, { userId: eve.userId })).status).toBe(200);
    expect((await rpc(app, "me", undefined, { cookie })).status).toBe(401);
    expect((await auth(app, "/get-session", { cookie })).body).toBeNull();
  });

  it("applies a removed role on the next request too", async () => {
    const ops = await signUp(app, "ops@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", ops.userId).execute();
    const cookie = await cached(ops);
    expect((await rpc(app, "staff", undefined, { cookie })).status).toBe(200);
    await app.db.updateTable("user").set({ role: "user" }).where("id", "=", ops.userId).execute();
    expect((await rpc(app, "staff", undefined, { cookie })).status).toBe(403);
  });
});
