// better-auth's organization plugin on the app's database: enabled by the schema's flag, options passed through.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { testApp, type TestApp, type TestAppInput } from "../../presets/testing.js";

const v1 = schema("1").auth({ organizations: { teams: true } }).build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000" })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true }, organization: { organizationLimit: 2 } });
}

describe("organizations: the library plugin", () => {
  let t: TestApp<typeof createApp>;
  beforeAll(async () => void (t = await testApp(createApp)));
  afterAll(() => t?.close());

  it("creates an organization, makes its creator owner and sets it active", async () => {
    const alice = await t.signUp();
    const created = await alice.fetch("/api/auth/organization/create", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Acme", slug: "acme" }) });
    expect(created.status).toBe(200);
    const org = (await created.json()) as { id: string; members: { role: string }[] };
    expect(org.members[0].role).toBe("owner");
    const member = await t.app.db.selectFrom("member").selectAll().where("organizationId", "=", org.id).executeTakeFirstOrThrow();
    expect(member).toMatchObject({ userId: alice.user.id, role: "owner" });
    const session = await (await alice.fetch("/api/auth/get-session")).json();
    expect(session.session.activeOrganizationId).toBe(org.id);
    const team = await alice.fetch("/api/auth/organization/create-team", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Core" }) });
    expect(team.status).toBe(200);
  });

  it("passes the app's options through (organizationLimit)", async () => {
    const bob = await t.signUp();
    const create = (slug: string) => bob.fetch("/api/auth/organization/create", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: slug, slug }) });
    expect((await create("b1")).status).toBe(200);
    expect((await create("b2")).status).toBe(200);
    expect((await create("b3")).status).toBe(403);
  });

  it("refuses organization options when the schema lacks the tables", () => {
    const app = new App({ db: sqliteMemory() }).schema(schema("1").auth().build()).auth({ secret: "x".repeat(40), organization: {} });
    expect(() => app.build()).toThrow(/ORGANIZATIONS_SCHEMA_MISSING|organizations: true/);
  });
});
