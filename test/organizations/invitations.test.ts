// Invitations by mail: the organization-invitation template through .mail() (the outbox here),
// accepted or declined through the library's endpoints, expiry enforced.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type TestApp, type TestAppInput } from "../../presets/testing.js";

const v1 = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id"), title: t.text() }))
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ name: "Teamwork", db, baseUrl: "http://localhost:3000" })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true }, organization: { invitationUrl: "http://localhost:3000/invite/{id}" } })
    .mail({ from: "Teamwork <team@example.test>", transport: "outbox" })
    .resource("task", { tenant: "orgId" });
}

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("organization invitations by mail", () => {
  let t: TestApp<typeof createApp>;
  beforeAll(async () => void (t = await testApp(createApp)));
  afterAll(() => t?.close());

  it("mails the invitation with its link; accepting makes the invitee a member with the role", async () => {
    const owner = await t.signUp({ name: "Olga", email: "olga@example.test" });
    const org = ((await (await owner.fetch("/api/auth/organization/create", json({ name: "Acme <Ops>", slug: "acme" }))).json()) as { id: string }).id;
    await owner.client.task.create({ title: "for the team" });
    const invited = await owner.fetch("/api/auth/organization/invite-member", json({ email: "ivan@example.test", role: "admin" }));
    expect(invited.status).toBe(200);
    const invitation = (await invited.json()) as { id: string };
    const [mail] = await t.outbox({ to: "ivan@example.test" });
    expect(mail.subject).toBe("Olga invited you to Acme <Ops> on Teamwork");
    expect(mail.text).toContain(`http://localhost:3000/invite/${invitation.id}`);
    expect(mail.text).toContain("as admin");
    expect(mail.html).toContain("Acme &lt;Ops&gt;");

    const ivan = await t.signUp({ email: "ivan@example.test" });
    const shown = await ivan.fetch(`/api/auth/organization/get-invitation?id=${invitation.id}`);
    expect(shown.status).toBe(200);
    const accepted = await ivan.fetch("/api/auth/organization/accept-invitation", json({ invitationId: invitation.id }));
    expect(accepted.status).toBe(200);
    const member = await t.app.db.selectFrom("member").select(["role"]).where("organizationId", "=", org).where("userId", "=", ivan.user.id).executeTakeFirstOrThrow();
    expect(member.role).toBe("admin");
    // Accepting sets the organization active: the team's rows are there.
    expect((await ivan.client.task.list({})).map((row: { title: string }) => row.title)).toEqual(["for the team"]);
  });

  it("declines, and refuses an expired invitation", async () => {
    const owner = await t.signUp({ email: "owner2@example.test" });
    await owner.fetch("/api/auth/organization/create", json({ name: "Beta", slug: "beta" }));
    const invite = async (email: string) => ((await (await owner.fetch("/api/auth/organization/invite-member", json({ email, role: "member" }))).json()) as { id: string }).id;
    const declinedId = await invite("dora@example.test");
    const dora = await t.signUp({ email: "dora@example.test" });
    expect((await dora.fetch("/api/auth/organization/reject-invitation", json({ invitationId: declinedId }))).status).toBe(200);
    expect((await dora.fetch("/api/auth/organization/accept-invitation", json({ invitationId: declinedId }))).status).toBe(400);

    const lateId = await invite("lena@example.test");
    await t.app.db.updateTable("invitation").set({ expiresAt: new Date(Date.now() - 1000) }).where("id", "=", lateId).execute();
    const lena = await t.signUp({ email: "lena@example.test" });
    expect((await lena.fetch("/api/auth/organization/accept-invitation", json({ invitationId: lateId }))).status).toBe(400);
    expect(await t.app.db.selectFrom("member").select("id").where("userId", "=", lena.user.id).execute()).toEqual([]);
  });
});
