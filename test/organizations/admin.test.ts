// `_admin.organizations.*` through the front door: only admins, only with organizations; counts,
// members with roles, pending invitations; each write applies on the member's very next request and
// lands in the audit log as the admin's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "../../presets/testing.js";

const v1 = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(), title: t.text() }))
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .resource("task", { tenant: "orgId" })
    .audit({ tables: ["member", "invitation", "organization"] })
    .admin();
}

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("_admin.organizations", () => {
  let t: TestApp<typeof createApp>;
  let admin: Actor<any>;
  let olga: Actor<any>;
  let ivan: Actor<any>;
  let acme: string;
  let beta: string;
  let invitation: string;
  /** `_admin.organizations.<name>` as `who`: status and body. */
  const call = async (name: string, input: unknown, who: Actor<any> | null = admin) => {
    const response = await (who ?? t.anonymous).fetch(`/rpc/_admin/organizations/${name}`, json({ json: input }));
    const body = (await response.json()) as { json?: any };
    return { status: response.status, body: body.json ?? body };
  };

  beforeAll(async () => {
    t = await testApp(createApp);
    admin = await t.asAdmin({ email: "root@example.test" });
    olga = await t.signUp({ email: "olga@example.test", name: "Olga" });
    ivan = await t.signUp({ email: "ivan@example.test", name: "Ivan" });
    acme = ((await (await olga.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme" }))).json()) as { id: string }).id;
    // Olga adds Ivan as a member, and invites a third person.
    const invited = await olga.fetch("/api/auth/organization/invite-member", json({ email: "ivan@example.test", role: "member" }));
    const ivanInvite = ((await invited.json()) as { id: string }).id;
    expect((await ivan.fetch("/api/auth/organization/accept-invitation", json({ invitationId: ivanInvite }))).status).toBe(200);
    invitation = ((await (await olga.fetch("/api/auth/organization/invite-member", json({ email: "pat@example.test", role: "admin" }))).json()) as { id: string }).id;
    beta = ((await (await ivan.fetch("/api/auth/organization/create", json({ name: "Beta", slug: "beta" }))).json()) as { id: string }).id;
    // Ivan works in Acme.
    expect((await ivan.fetch("/api/auth/organization/set-active", json({ organizationId: acme }))).status).toBe(200);
    await olga.client.task.create({ title: "ship" });
  }, 120_000);
  afterAll(() => t?.close());

  it("answers 401 signed out and 403 to a non-admin on every action, before reading the input", async () => {
    const actions: [string, unknown][] = [
      ["list", {}],
      ["get", { id: acme }],
      ["memberships", { userId: olga.user.id }],
      ["setRoles", { memberId: "x", roles: ["admin"] }],
      ["removeMember", { memberId: "x" }],
      ["cancelInvitation", { id: invitation }],
      ["delete", { id: acme }],
      ["delete", { nonsense: true }],
    ];
    for (const [name, input] of actions) {
      expect((await call(name, input, null)).status, name).toBe(401);
      // Olga owns Acme, but holds no admin role of the app.
      const refused = await call(name, input, olga);
      expect(refused.status, name).toBe(403);
      expect(refused.body.message).toBe("Requires one of the roles: admin");
    }
    // Nothing changed.
    expect((await call("get", { id: acme })).body.invitations).toBe(1);
  });

  it("lists every organization with its member and pending invitation counts", async () => {
    const listed = await call("list", {});
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(2);
    const meta = (await (await admin.fetch("/rpc/_admin/meta", json({}))).json()) as { json: { sections: string[]; resources: { name: string; tenant: string | null }[] } };
    expect(meta.json.sections).toEqual(["audit", "organizations"]);
    expect(meta.json.resources).toEqual([expect.objectContaining({ name: "task", tenant: "orgId" })]);
    const bySlug = Object.fromEntries(listed.body.data.map((org: any) => [org.slug, org]));
    expect(bySlug.acme).toMatchObject({ id: acme, name: "Acme", members: 2, invitations: 1 });
    expect(bySlug.beta).toMatchObject({ id: beta, name: "Beta", members: 1, invitations: 0 });
    expect((await call("list", { take: 1 })).body.data).toHaveLength(1);
    expect((await call("list", { take: 0 })).status).toBe(400);
  });

  it("gets one with its members, their roles and its pending invitations; 404 for none", async () => {
    const got = await call("get", { id: acme });
    expect(got.status).toBe(200);
    expect(got.body.memberList.map((m: any) => [m.email, m.name, m.roles])).toEqual([
      ["olga@example.test", "Olga", ["owner"]],
      ["ivan@example.test", "Ivan", ["member"]],
    ]);
    expect(got.body.pendingInvitations).toEqual([expect.objectContaining({ id: invitation, email: "pat@example.test", role: "admin", status: "pending", inviterEmail: "olga@example.test" })]);
    const missing = await call("get", { id: "nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('No organization with id "nope"');
  });

  it("lists a user's memberships with their roles", async () => {
    const memberships = await call("memberships", { userId: ivan.user.id });
    expect(memberships.status).toBe(200);
    expect(memberships.body.map((m: any) => [m.organization, m.roles])).toEqual([
      ["Acme", ["member"]],
      ["Beta", ["owner"]],
    ]);
    expect((await call("memberships", { userId: admin.user.id })).body).toEqual([]);
  });

  it("changes a member's roles, refuses unknown roles and keeps an owner", async () => {
    const members = (await call("get", { id: acme })).body.memberList as { id: string; email: string }[];
    const ivanMember = members.find((m) => m.email === "ivan@example.test")!.id;
    const olgaMember = members.find((m) => m.email === "olga@example.test")!.id;
    const unknown = await call("setRoles", { memberId: ivanMember, roles: ["wizard"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('Unknown role "wizard" (roles: owner, admin, member)');
    expect((await call("setRoles", { memberId: ivanMember, roles: [] })).status).toBe(400);
    expect((await call("setRoles", { memberId: "nope", roles: ["admin"] })).status).toBe(404);
    const lastOwner = await call("setRoles", { memberId: olgaMember, roles: ["admin"] });
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.message).toMatch(/only owner/);
    const set = await call("setRoles", { memberId: ivanMember, roles: ["admin", "member"] });
    expect(set).toEqual({ status: 200, body: { id: ivanMember, roles: ["admin", "member"] } });
    expect((await t.app.db.selectFrom("member").select("role").where("id", "=", ivanMember).executeTakeFirstOrThrow()).role).toBe("admin,member");
    // The library reads the new role at once: an admin may invite.
    expect((await ivan.fetch("/api/auth/organization/invite-member", json({ email: "quinn@example.test", role: "member" }))).status).toBe(200);
    // With a second owner, the first may be demoted.
    expect((await call("setRoles", { memberId: ivanMember, roles: ["owner"] })).status).toBe(200);
    expect((await call("setRoles", { memberId: olgaMember, roles: ["admin"] })).status).toBe(200);
    expect((await call("setRoles", { memberId: olgaMember, roles: ["owner"] })).status).toBe(200);
    expect((await call("setRoles", { memberId: ivanMember, roles: ["member"] })).status).toBe(200);
  });

  it("cancels a pending invitation once: it can no longer be accepted", async () => {
    const cancelled = await call("cancelInvitation", { id: invitation });
    expect(cancelled).toEqual({ status: 200, body: { id: invitation, status: "canceled" } });
    const again = await call("cancelInvitation", { id: invitation });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe(`Invitation ${invitation} is canceled; only a pending invitation can be cancelled`);
    expect((await call("cancelInvitation", { id: "nope" })).status).toBe(404);
    const pat = await t.signUp({ email: "pat@example.test" });
    expect((await pat.fetch("/api/auth/organization/accept-invitation", json({ invitationId: invitation }))).status).toBe(400);
    expect((await call("get", { id: acme })).body.pendingInvitations.map((i: any) => i.email)).toEqual(["quinn@example.test"]);
  });

  it("removes a member: their next tenant request has no organization; the owner stays", async () => {
    expect((await ivan.client.task.list({})).map((row: { title: string }) => row.title)).toEqual(["ship"]);
    const members = (await call("get", { id: acme })).body.memberList as { id: string; email: string }[];
    const olgaMember = members.find((m) => m.email === "olga@example.test")!.id;
    const lastOwner = await call("removeMember", { memberId: olgaMember });
    expect(lastOwner.status).toBe(409);
    const removed = await call("removeMember", { memberId: members.find((m) => m.email === "ivan@example.test")!.id });
    expect(removed).toEqual({ status: 200, body: { removed: true } });
    await expect(ivan.client.task.list({})).rejects.toMatchObject({ status: 403, code: "NO_ACTIVE_ORGANIZATION" });
    expect((await call("removeMember", { memberId: members[1]!.id })).status).toBe(404);
    expect((await call("list", {})).body.data.find((org: any) => org.id === acme).members).toBe(1);
  });

  it("deletes an organization with its members, invitations and rows; sessions in it have none active", async () => {
    expect((await call("delete", { id: "nope" })).status).toBe(404);
    const deleted = await call("delete", { id: acme });
    expect(deleted).toEqual({ status: 200, body: { deleted: true } });
    expect((await call("get", { id: acme })).status).toBe(404);
    expect(await t.app.db.selectFrom("member").select("id").where("organizationId", "=", acme).execute()).toEqual([]);
    expect(await t.app.db.selectFrom("task").select("id").execute()).toEqual([]);
    const session = (await (await olga.fetch("/api/auth/get-session")).json()) as { session: { activeOrganizationId: string | null } };
    expect(session.session.activeOrganizationId).toBeNull();
    const refused = await olga.client.task.list({}).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 403, code: "NO_ACTIVE_ORGANIZATION" });
    expect((await call("list", {})).body.count).toBe(1);
  });

  it("records the writes in the audit log as the admin's, through _admin", async () => {
    const entries = (await (await admin.fetch("/rpc/_admin/audit/list", json({ json: { table: "member", actor: admin.user.id } }))).json()) as { json: { entries: { op: string; source: string }[] } };
    expect(entries.json.entries.map((entry) => `${entry.op} ${entry.source}`)).toEqual(expect.arrayContaining(["update admin", "delete admin"]));
    const invitations = (await (await admin.fetch("/rpc/_admin/audit/list", json({ json: { table: "invitation", op: "update", actor: admin.user.id } }))).json()) as { json: { entries: unknown[] } };
    expect(invitations.json.entries).toHaveLength(1);
  });
});

describe("_admin.organizations without organizations", () => {
  it("is not served (404), and the dashboard's meta lists no organizations section", async () => {
    const t = await testApp(({ db, secret }: TestAppInput) =>
      new App({ db, baseUrl: "http://localhost:3000" }).schema(schema("1").auth().build()).auth({ secret, emailAndPassword: { enabled: true } }).admin(),
    );
    try {
      const admin = await t.asAdmin();
      expect((await admin.fetch("/rpc/_admin/organizations/list", json({ json: {} }))).status).toBe(404);
      const meta = (await (await admin.fetch("/rpc/_admin/meta", json({}))).json()) as { json: { sections: string[] } };
      expect(meta.json.sections).not.toContain("organizations");
    } finally {
      await t.close();
    }
  });
});
