/**
 * The dashboard's Organizations view in Chromium (as in dashboard-mail.test.ts): the list with its
 * counts, one organization's members, roles and invitations changed from its panel, its deletion,
 * a user's memberships in the user panel, and a tenant table filtered by organization. Each action
 * is checked in the database afterwards. Skips, saying why, without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { RunningServer } from "../../presets/node.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { pressTabUntil } from "../support/browser.js";
import { dashboardSuite, PASSWORD, signUpAdmin } from "../support/dashboard.js";
import { SECRET } from "./fixture.js";

const v1 = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(), title: t.text() }))
  .build();

const dashboard = await dashboardSuite("trellis-admin-orgs-chromium-", "the dashboard organizations suite");

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's Organizations view in Chromium", () => {
  let running: RunningServer;
  let page: Page;
  let url: string;
  let olga: SignedIn;
  let ivan: SignedIn;
  let acme: string;
  let beta: string;

  /** A better-auth organization endpoint as `who`, through the front door. */
  const orgCall = async (who: SignedIn, path: string, body: unknown) => {
    const response = await running.app.handle(
      new Request(`${ORIGIN}/api/auth/organization/${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, cookie: who.cookie }, body: JSON.stringify(body) }),
    );
    expect(response.status, path).toBe(200);
    return (await response.json()) as { id: string };
  };
  const rolesOf = async (userId: string, organizationId: string) =>
    (await running.app.db.selectFrom("member").select("role").where("userId", "=", userId).where("organizationId", "=", organizationId).executeTakeFirst())?.role;

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve((url, db) =>
      new App({ name: "Teams", baseUrl: url, db })
        .schema(v1)
        .auth({ secret: SECRET, emailAndPassword: { enabled: true }, trustedOrigins: [ORIGIN] })
        .resource("task", { tenant: "orgId" })
        .admin(),
    ));
    await signUpAdmin(running.app);
    olga = await signUp(running.app, "olga@example.test", PASSWORD);
    ivan = await signUp(running.app, "ivan@example.test", PASSWORD);
    acme = (await orgCall(olga, "create", { name: "Acme", slug: "acme" })).id;
    const invited = await orgCall(olga, "invite-member", { email: "ivan@example.test", role: "member" });
    await orgCall(ivan, "accept-invitation", { invitationId: invited.id });
    await orgCall(olga, "invite-member", { email: "pat@example.test", role: "admin" });
    beta = (await orgCall(ivan, "create", { name: "Beta", slug: "beta" })).id;
    await running.app.db.insertInto("task").values([{ orgId: acme, title: "acme launch" }, { orgId: acme, title: "acme review" }, { orgId: beta, title: "beta plan" }]).execute();
  }, 60_000);

  afterAll(() => dashboard.close());

  const nav = () => page.getByRole("navigation", { name: "Tables" });
  const orgRow = (name: string) => page.getByRole("table", { name: "organizations" }).getByRole("row").filter({ has: page.getByRole("button", { name }) });

  it("lists organizations with their member and invitation counts, reached by keyboard too", async () => {
    await dashboard.signIn();
    await nav().getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("status").filter({ hasText: "Organizations 1–2 of 2" }).waitFor();
    expect(await orgRow("Acme").getByRole("cell").allInnerTexts()).toEqual(["Acme", "acme", "2", "1", expect.any(String)]);
    expect(await orgRow("Beta").getByRole("cell").allInnerTexts()).toEqual(["Beta", "beta", "1", "0", expect.any(String)]);
    await page.screenshot({ path: dashboard.shot("admin-organizations.png") });
    await page.goto("about:blank");
    await page.goto(`${url}/_admin#/`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    await pressTabUntil(page, nav().getByRole("link", { name: "Organizations" }));
    await page.keyboard.press("Enter");
    await orgRow("Acme").waitFor();
  });

  it("changes a member's roles, refuses taking the last owner's, cancels an invitation and removes a member", async () => {
    await orgRow("Acme").getByRole("button", { name: "Acme" }).click();
    const panel = page.getByRole("complementary", { name: "Organization Acme" });
    const members = panel.getByRole("list", { name: "members" });
    await members.waitFor();
    expect(await panel.getByRole("form", { name: "Roles of olga@example.test" }).getByLabel("Roles").inputValue()).toBe("owner");

    const ivanRoles = panel.getByRole("form", { name: "Roles of ivan@example.test" });
    await ivanRoles.getByLabel("Roles").fill("admin, member");
    await ivanRoles.getByRole("button", { name: "Save roles" }).click();
    await panel.getByRole("status").filter({ hasText: "Roles of ivan@example.test saved" }).waitFor();
    expect(await rolesOf(ivan.userId, acme)).toBe("admin,member");

    const olgaRoles = panel.getByRole("form", { name: "Roles of olga@example.test" });
    await olgaRoles.getByLabel("Roles").fill("member");
    await olgaRoles.getByRole("button", { name: "Save roles" }).click();
    await panel.getByRole("alert").filter({ hasText: "only owner" }).waitFor();
    expect(await rolesOf(olga.userId, acme)).toBe("owner");

    const invitations = panel.getByRole("table", { name: "pending invitations" });
    expect(await invitations.getByRole("cell", { name: "pat@example.test", exact: true }).isVisible()).toBe(true);
    await panel.getByRole("button", { name: "Cancel the invitation of pat@example.test" }).click();
    await panel.getByText("No pending invitations.").waitFor();
    expect((await running.app.db.selectFrom("invitation").select("status").where("email", "=", "pat@example.test").executeTakeFirstOrThrow()).status).toBe("canceled");

    await panel.getByRole("button", { name: "Remove ivan@example.test" }).click();
    await panel.getByRole("status").filter({ hasText: "ivan@example.test removed" }).waitFor();
    expect(await rolesOf(ivan.userId, acme)).toBeUndefined();
    expect(await members.getByRole("listitem").count()).toBe(1);
    await page.keyboard.press("Escape");
    await expect.poll(() => orgRow("Acme").getByRole("cell").allInnerTexts()).toEqual(["Acme", "acme", "1", "0", expect.any(String)]);
  });

  it("filters a tenant table's rows by organization", async () => {
    await nav().getByRole("link", { name: /^task/ }).click();
    await page.getByRole("status").filter({ hasText: "Rows 1–3 of 3" }).waitFor();
    await page.getByRole("combobox", { name: "Organization" }).selectOption({ label: "Acme (acme)" });
    await page.getByRole("status").filter({ hasText: "Rows 1–2 of 2" }).waitFor();
    const titles = await page.getByRole("table", { name: "task rows" }).getByRole("cell", { name: /acme|beta/ }).allInnerTexts();
    expect(titles.sort()).toEqual(["acme launch", "acme review"]);
    await page.getByRole("combobox", { name: "Organization" }).selectOption({ label: "All organizations" });
    await page.getByRole("status").filter({ hasText: "Rows 1–3 of 3" }).waitFor();
  });

  it("shows a user's memberships and roles in the user panel", async () => {
    await nav().getByRole("link", { name: "Users" }).click();
    await page.getByRole("button", { name: "ivan@example.test" }).click();
    const panel = page.getByRole("complementary", { name: "User ivan@example.test" });
    const memberships = panel.getByRole("list", { name: "memberships" });
    await memberships.waitFor();
    expect(await memberships.getByRole("listitem").allInnerTexts()).toEqual(["Beta (beta): owner"]);
    await page.keyboard.press("Escape");
  });

  it("deletes an organization after a confirmation, with its rows", async () => {
    await nav().getByRole("link", { name: "Organizations" }).click();
    await orgRow("Beta").getByRole("button", { name: "Beta" }).click();
    const panel = page.getByRole("complementary", { name: "Organization Beta" });
    await panel.getByRole("button", { name: "Delete organization" }).click();
    await panel.getByRole("button", { name: "Confirm delete of Beta" }).click();
    await page.getByRole("status").filter({ hasText: "Organizations 1–1 of 1" }).waitFor();
    expect(await panel.count()).toBe(0);
    expect(await running.app.db.selectFrom("organization").select("id").where("id", "=", beta).execute()).toEqual([]);
    expect((await running.app.db.selectFrom("task").select("title").execute()).map((row) => row.title).sort()).toEqual(["acme launch", "acme review"]);
  });
});
