// `_admin.users.*` writes went through the auth library's admin endpoints with the admin's own
// headers, and the library checked the caller again by its own rule: the role string split on bare
// commas, matched against its own access-control roles. So an admin Trellis let in was refused 403
// ("You are not allowed to ban users") on every write when their role read "user, admin" (the
// comma-and-space form docs/auth.md shows) or when `.admin({ roles })` named a role other than
// `admin`, while `_admin.users.list` and `_admin.data.*` (which can write the same user row) worked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { ORIGIN, signIn, signUp, type SignedIn } from "../support/auth.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { SECRET } from "../admin/fixture.js";

const v1 = schema("1").auth().build();

describe("_admin.users writes answer to the admin API's own roles", () => {
  let app: any;
  let spaced: SignedIn;
  let ops: SignedIn;
  let plain: SignedIn;
  const whoami = async (cookie: string) => (await rpc(app, "whoami", undefined, { cookie })).body?.id ?? null;

  beforeAll(async () => {
    app = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .procedure("whoami", (base) => base.handler(({ context }) => ({ id: context.user?.id ?? null })))
      .admin({ roles: ["admin", "ops"] })
      .start();
    spaced = await signUp(app, "spaced@example.test");
    ops = await signUp(app, "ops@example.test");
    plain = await signUp(app, "plain@example.test");
    await app.db.updateTable("user").set({ role: "user, admin" }).where("id", "=", spaced.userId).execute();
    await app.db.updateTable("user").set({ role: "ops" }).where("id", "=", ops.userId).execute();
  });
  afterAll(() => app?.close());

  for (const [label, who] of [["an admin whose role reads \"user, admin\"", () => spaced], ["an admin by a role of .admin({ roles })", () => ops]] as const) {
    it(`lets ${label} set roles, ban, unban, revoke sessions and create users`, async () => {
      const as = { cookie: who().cookie };
      const target = await signUp(app, `target-${who().userId}@example.test`);
      const roles = await rpc(app, "_admin.users.setRoles", { id: target.userId, roles: ["user", "editor"] }, as);
      expect([roles.status, roles.body.roles]).toEqual([200, ["user", "editor"]]);

      const banned = await rpc(app, "_admin.users.ban", { id: target.userId, reason: "spam" }, as);
      expect([banned.status, banned.body.banned, banned.body.banReason]).toEqual([200, true, "spam"]);
      expect(await whoami(target.cookie)).toBe(null);
      expect((await app.db.selectFrom("session").select("id").where("userId", "=", target.userId).execute()).length).toBe(0);
      expect((await rpc(app, "_admin.users.ban", { id: who().userId }, as)).status).toBe(400);

      const unbanned = await rpc(app, "_admin.users.unban", { id: target.userId }, as);
      expect([unbanned.status, unbanned.body.banned, unbanned.body.banReason]).toEqual([200, false, null]);
      const again = await signIn(app, target.email);
      expect(await whoami(again.cookie)).toBe(target.userId);

      const sessions = (await rpc(app, "_admin.users.get", { id: target.userId }, as)).body.sessions as { id: string }[];
      expect((await rpc(app, "_admin.users.revokeSession", { id: sessions[0]!.id }, as)).body).toEqual({ revoked: 1 });
      expect(await whoami(again.cookie)).toBe(null);
      const third = await signIn(app, target.email);
      expect((await rpc(app, "_admin.users.revokeSessions", { id: target.userId }, as)).body).toEqual({ revoked: 1 });
      expect(await whoami(third.cookie)).toBe(null);

      const email = `new-${who().userId}@example.test`.toLowerCase();
      const created = await rpc(app, "_admin.users.create", { email, name: "New", password: "a-long-enough-password", roles: ["editor"] }, as);
      expect([created.status, created.body.email, created.body.roles]).toEqual([200, email, ["editor"]]);
      expect(await whoami((await signIn(app, email, "a-long-enough-password")).cookie)).toBe(created.body.id);
      expect((await rpc(app, "_admin.users.create", { email, name: "Again" }, as)).status).toBe(400);
    });
  }

  it("still refuses a caller without one of the roles, before anything is written", async () => {
    const refused = await rpc(app, "_admin.users.ban", { id: spaced.userId }, { cookie: plain.cookie });
    expect(refused.status).toBe(403);
    expect((await app.db.selectFrom("user").select("banned").where("id", "=", spaced.userId).executeTakeFirstOrThrow()).banned).toBeFalsy();
  });
});
