// An admin's impersonation session (better-auth's `POST /api/auth/admin/impersonate-user`) belongs
// to the impersonated user, so banning the admin, taking their admin role away or deleting them ended
// their own sessions but not the one they were using to act as someone else: for up to the
// impersonation's hour they kept acting as that user on every surface.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { SECRET } from "../admin/fixture.js";

const v1 = schema("1").auth().build();

describe("an impersonation session follows its impersonator", () => {
  let app: any;
  let root: SignedIn;
  let alice: SignedIn;
  let n = 0;
  const whoami = async (cookie: string) => (await rpc(app, "whoami", undefined, { cookie })).body?.id ?? null;
  const getSession = async (cookie: string) =>
    (await (await app.handle(new Request(`${ORIGIN}/api/auth/get-session`, { headers: { cookie } }))).json()) as { user?: { id: string } } | null;
  /** A fresh admin who impersonates alice: the cookie of the impersonation session. */
  const impersonator = async (): Promise<{ admin: SignedIn; cookie: string }> => {
    const admin = await signUp(app, `mallory${++n}@example.test`);
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    const response = await app.handle(
      new Request(`${ORIGIN}/api/auth/admin/impersonate-user`, {
        method: "POST",
        headers: { cookie: admin.cookie, origin: ORIGIN, "content-type": "application/json" },
        body: JSON.stringify({ userId: alice.userId }),
      }),
    );
    expect(response.status).toBe(200);
    // The answer expires the admin's cookie and sets the impersonation one: keep the last value of each.
    const jar = new Map(response.headers.getSetCookie().map((line: string) => line.split(";")[0]!.split(/=(.*)/s).slice(0, 2) as [string, string]));
    const cookie = [...jar].filter(([, value]) => value).map(([name, value]) => `${name}=${value}`).join("; ");
    expect(await whoami(cookie)).toBe(alice.userId);
    return { admin, cookie };
  };

  beforeAll(async () => {
    app = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .procedure("whoami", (base) => base.handler(({ context }) => ({ id: context.user?.id ?? null })))
      .admin()
      .start();
    root = await signUp(app, "root@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", root.userId).execute();
    alice = await signUp(app, "alice@example.test");
  });
  afterAll(() => app?.close());

  it("ends when the impersonator is banned", async () => {
    const { admin, cookie } = await impersonator();
    expect((await rpc(app, "_admin.users.ban", { id: admin.userId }, { cookie: root.cookie })).status).toBe(200);
    expect(await whoami(cookie)).toBe(null);
    expect(await getSession(cookie)).toBe(null);
    // Alice's own session is untouched.
    expect(await whoami(alice.cookie)).toBe(alice.userId);
  });

  it("ends when the impersonator loses the admin role", async () => {
    const { admin, cookie } = await impersonator();
    expect((await rpc(app, "_admin.users.setRoles", { id: admin.userId, roles: ["user"] }, { cookie: root.cookie })).status).toBe(200);
    expect(await whoami(cookie)).toBe(null);
    expect(await getSession(cookie)).toBe(null);
  });

  it("ends when the impersonator is deleted", async () => {
    const { admin, cookie } = await impersonator();
    await app.db.deleteFrom("session").where("userId", "=", admin.userId).execute();
    await app.db.deleteFrom("account").where("userId", "=", admin.userId).execute();
    await app.db.deleteFrom("user").where("id", "=", admin.userId).execute();
    expect(await whoami(cookie)).toBe(null);
  });

  it("goes on while the impersonator keeps the right", async () => {
    const { cookie } = await impersonator();
    expect(await whoami(cookie)).toBe(alice.userId);
    expect((await getSession(cookie))?.user?.id).toBe(alice.userId);
  });
});
