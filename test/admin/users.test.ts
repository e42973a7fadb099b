// `_admin.users.*` through the front door: who may call them, what they show, and that each action
// applies on the very next request on every surface (RPC, a raw route, `/api/auth`).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signIn, signUp, type SignedIn } from "../support/auth.js";
import { SECRET } from "./fixture.js";

const v1 = schema("1").auth({ apiKeys: true }).build();

function usersApp(db: TestDatabase) {
  return new App({ baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind } })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .procedure("whoami", (base) => base.handler(({ context }) => ({ id: context.user?.id ?? null, role: context.user?.role ?? null })))
    .route("GET", "/route-user", (_event, context) => ({ id: context.user?.id ?? null }))
    .admin();
}

describe.each(families())("_admin.users on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof usersApp>["start"]>>;
  let admin: SignedIn;
  let alice: SignedIn;
  let bob: SignedIn;
  const as = (who: SignedIn | null): Record<string, string> => (who ? { cookie: who.cookie } : {});
  const call = (name: string, input?: unknown, who: SignedIn | null = admin) => rpc(app, `_admin.users.${name}`, input, as(who));
  const whoami = async (headers: Record<string, string>) => (await rpc(app, "whoami", undefined, headers)).body?.id ?? null;
  const routeUser = async (headers: Record<string, string>) => ((await (await app.handle(new Request(`${ORIGIN}/route-user`, { headers }))).json()) as { id: string | null }).id;
  const createKey = async (who: SignedIn): Promise<{ id: string; key: string }> => {
    const response = await app.handle(
      new Request(`${ORIGIN}/api/auth/api-key/create`, { method: "POST", headers: { origin: ORIGIN, cookie: who.cookie, "content-type": "application/json" }, body: JSON.stringify({ name: "ci" }) }),
    );
    expect(response.status).toBe(200);
    return (await response.json()) as { id: string; key: string };
  };

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await usersApp(db).start();
    admin = await signUp(app, "root@example.test");
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "Bob.Builder@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("answers 401 signed out and 403 without an admin role on every action, before validating input", async () => {
    const actions: [string, unknown][] = [
      ["list", {}],
      ["get", { id: alice.userId }],
      ["create", { email: "x@example.test", name: "x" }],
      ["setRoles", { id: alice.userId, roles: ["admin"] }],
      ["ban", { id: admin.userId }],
      ["unban", { id: alice.userId }],
      ["revokeSession", { id: "nope" }],
      ["revokeSessions", { id: admin.userId }],
      ["revokeApiKey", { id: "nope" }],
      ["create", { nonsense: true }],
    ];
    for (const [name, input] of actions) {
      expect((await call(name, input, null)).status, name).toBe(401);
      const refused = await call(name, input, alice);
      expect(refused.status, name).toBe(403);
      expect(refused.body.message).toBe("Requires one of the roles: admin");
    }
    // Nothing happened: alice is still a plain user, and no user was created.
    expect((await app.db.selectFrom("user").select("role").where("id", "=", alice.userId).executeTakeFirstOrThrow()).role).toBe("user");
    expect(await app.db.selectFrom("user").select("id").where("email", "=", "x@example.test").executeTakeFirst()).toBeUndefined();
  });

  it("searches by email or name, case-insensitively, with the search's own wildcards taken literally", async () => {
    const byEmail = await call("list", { search: "ALICE@" });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.data.map((u: any) => u.email)).toEqual(["alice@example.test"]);
    expect(byEmail.body.count).toBe(1);
    expect((await call("list", { search: "builder" })).body.data.map((u: any) => u.id)).toEqual([bob.userId]);
    expect((await call("list", { search: "%" })).body).toEqual({ data: [], count: 0 });
    const all = await call("list", { take: 2 });
    expect(all.body.count).toBe(3);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.data[0]).toMatchObject({ roles: expect.any(Array), banned: false, banReason: null });
    expect((await call("list", { take: 0 })).status).toBe(400);
  });

  it("opens a user: sessions with their client address, accounts and API keys, never a secret", async () => {
    await createKey(alice);
    const { status, body } = await call("get", { id: alice.userId });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: alice.userId, email: "alice@example.test", roles: ["user"], banned: false });
    expect(body.sessions).toHaveLength(1);
    expect(Object.keys(body.sessions[0]).sort()).toEqual(["createdAt", "expiresAt", "id", "impersonatedBy", "ipAddress", "userAgent"]);
    expect(body.accounts).toEqual([expect.objectContaining({ providerId: "credential", hasPassword: true })]);
    expect(body.accounts[0].password).toBeUndefined();
    expect(body.apiKeys).toEqual([expect.objectContaining({ name: "ci", enabled: true })]);
    expect(body.apiKeys[0].key).toBeUndefined();
    const text = JSON.stringify(body);
    for (const { token } of await app.db.selectFrom("session").select("token").execute()) expect(text).not.toContain(token);
    expect((await call("get", { id: "missing" })).status).toBe(404);
  });

  it("sets roles: the next request sees them", async () => {
    const set = await call("setRoles", { id: bob.userId, roles: ["user", "admin"] });
    expect(set.status).toBe(200);
    expect(set.body.roles).toEqual(["user", "admin"]);
    expect((await app.db.selectFrom("user").select("role").where("id", "=", bob.userId).executeTakeFirstOrThrow()).role).toBe("user,admin");
    expect((await rpc(app, "_admin.users.list", {}, as(bob))).status).toBe(200);
    expect((await call("setRoles", { id: bob.userId, roles: ["user"] })).body.roles).toEqual(["user"]);
    expect((await rpc(app, "_admin.users.list", {}, as(bob))).status).toBe(403);
    expect((await call("setRoles", { id: bob.userId, roles: ["a,b"] })).status).toBe(400);
    expect((await call("setRoles", { id: "missing", roles: ["user"] })).status).toBe(404);
  });

  it("bans with a reason and an expiry: every surface and every credential refused at once; unban lets sign-in back", async () => {
    const key = await createKey(bob);
    expect(await whoami({ "x-api-key": key.key })).toBe(bob.userId);
    const until = new Date(Date.now() + 3_600_000);
    const banned = await call("ban", { id: bob.userId, reason: "spam", expiresAt: until.toISOString() });
    expect(banned.status).toBe(200);
    expect(banned.body).toMatchObject({ banned: true, banReason: "spam" });
    expect(Math.abs(new Date(banned.body.banExpires).getTime() - until.getTime())).toBeLessThan(2_000);
    expect(await whoami({ cookie: bob.cookie })).toBe(null);
    expect(await whoami({ "x-api-key": key.key })).toBe(null);
    expect(await routeUser({ cookie: bob.cookie })).toBe(null);
    await expect(signIn(app, bob.email)).rejects.toThrow(/403/);
    expect((await call("ban", { id: bob.userId, expiresAt: "2001-01-01T00:00:00Z" })).status).toBe(400);
    expect((await call("ban", { id: admin.userId })).status).toBe(400);

    const unbanned = await call("unban", { id: bob.userId });
    expect(unbanned.body).toMatchObject({ banned: false, banReason: null, banExpires: null });
    bob = await signIn(app, bob.email);
    expect(await whoami({ cookie: bob.cookie })).toBe(bob.userId);
    expect(await whoami({ "x-api-key": key.key })).toBe(bob.userId);
  });

  it("revokes one session, then all of them, by id: the token never travels", async () => {
    const second = await signIn(app, alice.email);
    const before = (await call("get", { id: alice.userId })).body.sessions as { id: string }[];
    expect(before).toHaveLength(2);
    const newest = before[0]!.id;
    expect((await call("revokeSession", { id: newest })).body).toEqual({ revoked: 1 });
    expect(await whoami({ cookie: second.cookie })).toBe(null);
    expect(await whoami({ cookie: alice.cookie })).toBe(alice.userId);
    expect((await call("revokeSession", { id: newest })).status).toBe(404);

    expect((await call("revokeSessions", { id: alice.userId })).body).toEqual({ revoked: 1 });
    expect(await whoami({ cookie: alice.cookie })).toBe(null);
    expect(await routeUser({ cookie: alice.cookie })).toBe(null);
    alice = await signIn(app, alice.email);
  });

  it("revokes an API key: refused from the next request", async () => {
    const key = await createKey(alice);
    expect(await whoami({ "x-api-key": key.key })).toBe(alice.userId);
    expect((await call("revokeApiKey", { id: key.id })).body).toEqual({ revoked: 1 });
    expect((await rpc(app, "whoami", undefined, { "x-api-key": key.key })).status).toBe(401);
    expect((await call("revokeApiKey", { id: key.id })).status).toBe(404);
  });

  it("creates a user who can sign in with the password given; a taken email is refused", async () => {
    const created = await call("create", { email: "New.Person@example.test", name: "New Person", password: "a-long-enough-password", roles: ["user"] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ email: "new.person@example.test", name: "New Person", roles: ["user"], banned: false });
    const signedIn = await signIn(app, "new.person@example.test", "a-long-enough-password");
    expect(await whoami({ cookie: signedIn.cookie })).toBe(created.body.id);
    const again = await call("create", { email: "new.person@example.test", name: "Again" });
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/exists/i);
    expect((await call("create", { email: "not-an-email", name: "x" })).status).toBe(400);
    expect((await call("create", { email: "short@example.test", name: "x", password: "short" })).status).toBe(400);
  });
});
