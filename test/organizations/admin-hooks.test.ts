// `_admin.organizations.*` runs the app's organizationHooks around its writes, with the arguments the
// library's own endpoints pass: a `before*` hook that throws refuses the write (an APIError answers its
// status and message, anything else 500) and the row stays; an `after*` hook runs once the write is done.
import { APIError } from "better-auth/api";
import { organization } from "better-auth/plugins/organization";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "../../presets/testing.js";

const v1 = schema("1").auth({ organizations: true }).build();

type Call = { hook: string; data: any; seen?: unknown };
/** Every hook call, in order; `probe` (set by a test) records what the database holds when an after* hook runs. */
const calls: Call[] = [];
let probe: ((hook: string, data: any) => Promise<unknown>) | undefined;
const record = (hook: string) => async (data: any) => {
  calls.push({ hook, data, seen: await probe?.(hook, data) });
};

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
    .schema(v1)
    .auth({
      secret,
      emailAndPassword: { enabled: true },
      organization: {
        organizationHooks: {
          beforeRemoveMember: async (data) => {
            await record("beforeRemoveMember")(data);
            if (data.user.email === "bill@example.test") throw new APIError("FORBIDDEN", { message: "Never remove the billing contact" });
          },
          afterRemoveMember: record("afterRemoveMember"),
          beforeUpdateMemberRole: async (data) => {
            await record("beforeUpdateMemberRole")(data);
            // The billing contact is never made an owner: an admin instead.
            if (data.user.email === "bill@example.test" && data.newRole.split(",").includes("owner")) return { data: { role: "admin" } };
          },
          afterUpdateMemberRole: record("afterUpdateMemberRole"),
          beforeCancelInvitation: async (data) => {
            await record("beforeCancelInvitation")(data);
            if (data.invitation.email === "keep@example.test") throw new APIError("BAD_REQUEST", { message: "This invitation stays" });
          },
          afterCancelInvitation: record("afterCancelInvitation"),
          beforeDeleteOrganization: async (data) => {
            await record("beforeDeleteOrganization")(data);
            if (data.organization.slug === "keep") throw new APIError("FORBIDDEN", { message: "Keep is never deleted" });
            if (data.organization.slug === "broken") throw new Error("the hook failed");
          },
          afterDeleteOrganization: record("afterDeleteOrganization"),
        },
      },
    })
    .admin();
}

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("_admin.organizations runs the app's organizationHooks", () => {
  let t: TestApp<typeof createApp>;
  let admin: Actor<any>;
  let olga: Actor<any>;
  let acme: string;
  const orgs: Record<string, string> = {};
  const invitations: Record<string, string> = {};
  const call = async (name: string, input: unknown) => {
    const response = await admin.fetch(`/rpc/_admin/organizations/${name}`, json({ json: input }));
    const body = (await response.json()) as { json?: any };
    return { status: response.status, body: body.json ?? body };
  };
  const memberId = async (email: string) => ((await call("get", { id: acme })).body.memberList as { id: string; email: string }[]).find((m) => m.email === email)?.id;
  const taken = (hook: string) => calls.filter((c) => c.hook === hook);

  beforeAll(async () => {
    t = await testApp(createApp);
    admin = await t.asAdmin({ email: "root@example.test" });
    olga = await t.signUp({ email: "olga@example.test", name: "Olga" });
    const create = async (slug: string) => ((await (await olga.fetch("/api/auth/organization/create", json({ name: slug, slug }))).json()) as { id: string }).id;
    for (const slug of ["keep", "broken", "gone"]) orgs[slug] = await create(slug);
    // Created last, so it is Olga's active organization for the invitations below.
    acme = await create("acme");
    for (const email of ["bill@example.test", "ivan@example.test"]) {
      const someone = await t.signUp({ email, name: email.split("@")[0] });
      const invited = ((await (await olga.fetch("/api/auth/organization/invite-member", json({ email, role: "member", organizationId: acme }))).json()) as { id: string }).id;
      expect((await someone.fetch("/api/auth/organization/accept-invitation", json({ invitationId: invited }))).status).toBe(200);
    }
    for (const email of ["keep@example.test", "pat@example.test"]) {
      invitations[email] = ((await (await olga.fetch("/api/auth/organization/invite-member", json({ email, role: "member", organizationId: acme }))).json()) as { id: string }).id;
    }
    calls.length = 0;
  }, 120_000);
  afterAll(() => t?.close());

  it("removeMember: a refusing beforeRemoveMember answers its status and message, and the member stays", async () => {
    const bill = (await memberId("bill@example.test"))!;
    const refused = await call("removeMember", { memberId: bill });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("Never remove the billing contact");
    expect(await memberId("bill@example.test")).toBe(bill);
    expect(calls.map((c) => c.hook)).toEqual(["beforeRemoveMember"]);
    expect(calls[0]!.data).toMatchObject({
      member: { id: bill, organizationId: acme, role: "member", userId: expect.any(String), createdAt: expect.any(Date) },
      user: { email: "bill@example.test", name: "bill" },
      organization: { id: acme, slug: "acme", name: "acme", createdAt: expect.any(Date) },
    });
    expect(calls[0]!.data.member.userId).toBe(calls[0]!.data.user.id);
  });

  it("removeMember: the hooks run around an allowed removal, afterRemoveMember once the row is gone", async () => {
    calls.length = 0;
    const ivan = (await memberId("ivan@example.test"))!;
    probe = async (hook, data) => (hook === "afterRemoveMember" ? (await t.app.db.selectFrom("member").select("id").where("id", "=", data.member.id).execute()).length : undefined);
    try {
      expect(await call("removeMember", { memberId: ivan })).toEqual({ status: 200, body: { removed: true } });
    } finally {
      probe = undefined;
    }
    expect(calls.map((c) => c.hook)).toEqual(["beforeRemoveMember", "afterRemoveMember"]);
    const after = taken("afterRemoveMember")[0]!;
    expect(after.seen).toBe(0);
    expect(after.data).toMatchObject({ member: { id: ivan, role: "member" }, user: { email: "ivan@example.test" }, organization: { id: acme } });
    expect(await memberId("ivan@example.test")).toBeUndefined();
  });

  it("setRoles: beforeUpdateMemberRole sees the new role, afterUpdateMemberRole the written one and the previous", async () => {
    calls.length = 0;
    const bill = (await memberId("bill@example.test"))!;
    expect(await call("setRoles", { memberId: bill, roles: ["admin", "member"] })).toEqual({ status: 200, body: { id: bill, roles: ["admin", "member"] } });
    expect(calls.map((c) => c.hook)).toEqual(["beforeUpdateMemberRole", "afterUpdateMemberRole"]);
    expect(calls[0]!.data).toMatchObject({ member: { id: bill, role: "member" }, newRole: "admin,member", user: { email: "bill@example.test" }, organization: { id: acme, slug: "acme" } });
    expect(calls[1]!.data).toMatchObject({ member: { id: bill, role: "admin,member" }, previousRole: "member", user: { email: "bill@example.test" }, organization: { id: acme } });
  });

  it("setRoles: the role a beforeUpdateMemberRole returns is the one written", async () => {
    calls.length = 0;
    const bill = (await memberId("bill@example.test"))!;
    expect(await call("setRoles", { memberId: bill, roles: ["owner"] })).toEqual({ status: 200, body: { id: bill, roles: ["admin"] } });
    expect((await t.app.db.selectFrom("member").select("role").where("id", "=", bill).executeTakeFirstOrThrow()).role).toBe("admin");
    expect(taken("beforeUpdateMemberRole")[0]!.data.newRole).toBe("owner");
    expect(taken("afterUpdateMemberRole")[0]!.data).toMatchObject({ member: { role: "admin" }, previousRole: "admin,member" });
  });

  it("cancelInvitation: a refusing beforeCancelInvitation keeps it pending; an allowed one runs both hooks", async () => {
    calls.length = 0;
    const refused = await call("cancelInvitation", { id: invitations["keep@example.test"] });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe("This invitation stays");
    expect(calls.map((c) => c.hook)).toEqual(["beforeCancelInvitation"]);
    const pending = () => call("get", { id: acme }).then((got) => got.body.pendingInvitations.map((i: { email: string }) => i.email).sort());
    expect(await pending()).toEqual(["keep@example.test", "pat@example.test"]);

    calls.length = 0;
    const pat = invitations["pat@example.test"]!;
    expect(await call("cancelInvitation", { id: pat })).toEqual({ status: 200, body: { id: pat, status: "canceled" } });
    expect(calls.map((c) => c.hook)).toEqual(["beforeCancelInvitation", "afterCancelInvitation"]);
    // The library passes the member who cancels: here, the admin.
    expect(calls[0]!.data).toMatchObject({
      invitation: { id: pat, email: "pat@example.test", status: "pending", organizationId: acme, expiresAt: expect.any(Date) },
      cancelledBy: { id: admin.user.id, email: "root@example.test" },
      organization: { id: acme, slug: "acme" },
    });
    expect(calls[1]!.data).toMatchObject({ invitation: { id: pat, status: "canceled" }, cancelledBy: { email: "root@example.test" }, organization: { id: acme } });
    expect(await pending()).toEqual(["keep@example.test"]);
  });

  it("delete: a refusing beforeDeleteOrganization keeps it (APIError: its status; another error: 500)", async () => {
    calls.length = 0;
    const refused = await call("delete", { id: orgs.keep });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("Keep is never deleted");
    expect((await call("get", { id: orgs.keep })).status).toBe(200);
    expect(calls.map((c) => c.hook)).toEqual(["beforeDeleteOrganization"]);
    expect(calls[0]!.data).toMatchObject({ organization: { id: orgs.keep, slug: "keep" }, user: { id: admin.user.id, email: "root@example.test" } });

    expect((await call("delete", { id: orgs.broken })).status).toBe(500);
    expect((await call("get", { id: orgs.broken })).status).toBe(200);
    expect(taken("afterDeleteOrganization")).toEqual([]);
  });

  it("delete: an allowed deletion runs afterDeleteOrganization once the organization is gone", async () => {
    calls.length = 0;
    probe = async (hook, data) => (hook === "afterDeleteOrganization" ? (await t.app.db.selectFrom("organization").select("id").where("id", "=", data.organization.id).execute()).length : undefined);
    try {
      expect(await call("delete", { id: orgs.gone })).toEqual({ status: 200, body: { deleted: true } });
    } finally {
      probe = undefined;
    }
    expect(calls.map((c) => c.hook)).toEqual(["beforeDeleteOrganization", "afterDeleteOrganization"]);
    expect(calls[1]!.seen).toBe(0);
    expect(calls[1]!.data).toMatchObject({ organization: { id: orgs.gone, slug: "gone", name: "gone" }, user: { email: "root@example.test" } });
    expect((await call("get", { id: orgs.gone })).status).toBe(404);
  });
});

describe("_admin.organizations with the app's own organization() in plugins", () => {
  it("runs that plugin's hooks", async () => {
    const t = await testApp(({ db, secret }: TestAppInput) =>
      new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
        .schema(v1)
        .auth({
          secret,
          emailAndPassword: { enabled: true },
          plugins: [
            organization({
              organizationHooks: {
                beforeDeleteOrganization: async ({ organization: org }) => {
                  throw new APIError("FORBIDDEN", { message: `${org.name} is kept by the app's own plugin` });
                },
              },
            }),
          ],
        })
        .admin(),
    );
    try {
      const admin = await t.asAdmin();
      const olga = await t.signUp({ email: "olga@example.test" });
      const acme = ((await (await olga.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme" }))).json()) as { id: string }).id;
      const refused = await admin.fetch("/rpc/_admin/organizations/delete", json({ json: { id: acme } }));
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { json: { message: string } }).json.message).toBe("Acme is kept by the app's own plugin");
      expect((await admin.fetch("/rpc/_admin/organizations/get", json({ json: { id: acme } }))).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
