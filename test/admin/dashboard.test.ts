/**
 * The dashboard in a real browser: Debian's Chromium, driven by playwright-core, against an app
 * served on a real port. Elements are found by role and label, as a person would find them; the
 * database is checked after each step. Skips, saying why, when no browser can be started.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { RunningServer } from "../../presets/node.js";
import { signIn, signUp } from "../support/auth.js";
import { dashboardSuite, PASSWORD, signUpAdmin } from "../support/dashboard.js";
import { adminApp } from "./fixture.js";

const dashboard = await dashboardSuite("trellis-admin-chromium-", "the dashboard browser suite");
const { shot } = dashboard;

describe.skipIf(dashboard.unavailable !== undefined)("the admin dashboard in Chromium", () => {
  let running: RunningServer;
  let page: Page;
  let url: string;
  let reader: { cookie: string; userId: string };

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve((url, db) => adminApp(db, {}, url)));
    const app = running.app;
    const boss = await signUpAdmin(app);
    reader = await signUp(app, "reader@example.test", PASSWORD);
    await app.db
      .insertInto("post")
      .values(Array.from({ length: 30 }, (_, i) => ({ title: `post ${String(i).padStart(2, "0")}`, views: i * 3, authorId: boss.userId })))
      .execute();
  }, 60_000);

  afterAll(() => dashboard.close());

  const db$ = () => running.app.db;
  const rows = () => page.getByRole("table", { name: "post rows" }).locator("tbody tr");

  async function signInAs(email: string) {
    await page.goto(`${url}/_admin`);
    await expect.poll(() => page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(true);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  it("shows the sign-in form signed out, then the tables and their row counts", async () => {
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => message.type() === "error" && !message.text().includes("401") && errors.push(message.text()));
    await signInAs("boss@example.test");
    const nav = page.getByRole("navigation", { name: "Tables" });
    await nav.getByRole("link", { name: /post/ }).waitFor();
    expect(await nav.getByRole("link", { name: /post/ }).textContent()).toContain("30");
    expect(await nav.getByRole("link", { name: /user/ }).textContent()).toContain("2");
    // The overview: migrations and surfaces.
    expect(await page.getByRole("heading", { name: "Migrations" }).isVisible()).toBe(true);
    expect(await page.getByRole("cell", { name: "0002_2" }).isVisible()).toBe(true);
    expect(await page.getByText("dashboard: on").isVisible()).toBe(true);
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("browses a table with paging and sorting", async () => {
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: /post/ }).click();
    await page.getByRole("status").filter({ hasText: "Rows 1–25 of 30" }).waitFor();
    expect(await rows().count()).toBe(25);
    await page.getByRole("button", { name: "views" }).click();
    await page.getByRole("button", { name: "views ▲" }).click();
    await page.getByRole("button", { name: "views ▼" }).waitFor();
    await expect.poll(() => rows().first().locator("td").nth(4).textContent()).toBe("87");
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByRole("status").filter({ hasText: "Rows 26–30 of 30" }).waitFor();
    expect(await rows().count()).toBe(5);
    expect(await rows().last().locator("td").nth(4).textContent()).toBe("0");
  });

  it("filters rows, and shows an API error as a message", async () => {
    await page.getByLabel("Filter column").selectOption("title");
    await page.getByLabel("Operator").selectOption("startsWith");
    await page.getByLabel("Value").fill("post 1");
    await page.getByRole("button", { name: "Add filter" }).click();
    const expected = await db$().query.post.count({ where: { title: { startsWith: "post 1" } } });
    await page.getByRole("status").filter({ hasText: `of ${expected}` }).waitFor();
    expect(await rows().count()).toBe(expected);
    await page.getByRole("button", { name: "Remove filter title startsWith post 1" }).click();
    await page.getByRole("status").filter({ hasText: "of 30" }).waitFor();
    // A value that does not fit the column: the API's 400 is shown, not a blank screen.
    await page.getByLabel("Filter column").selectOption("views");
    await page.getByLabel("Operator").selectOption("gt");
    await page.getByLabel("Value").fill("lots");
    await page.getByRole("button", { name: "Add filter" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/views/);
    await page.getByRole("button", { name: /Remove filter views gt lots/ }).click();
    await page.getByRole("status").filter({ hasText: "of 30" }).waitFor();
  });

  let id: number;
  it("creates a row from a form built from the column types", async () => {
    await page.getByRole("button", { name: "New row" }).click();
    const panel = page.getByRole("complementary", { name: "New post row" });
    await panel.getByLabel("title", { exact: true }).fill("Made in the browser");
    await panel.getByLabel("views", { exact: true }).fill("42");
    await panel.getByLabel("published").check();
    await panel.getByRole("button", { name: "Create" }).click();
    await page.getByRole("status").filter({ hasText: "of 31" }).waitFor();
    const row = await db$().selectFrom("post").selectAll().where("title", "=", "Made in the browser").executeTakeFirstOrThrow();
    expect(row).toMatchObject({ views: 42, body: null });
    expect(Boolean(row.published)).toBe(true);
    id = row.id;
  });

  it("opens, edits and deletes that row", async () => {
    await page.getByLabel("Filter column").selectOption("id");
    await page.getByLabel("Operator").selectOption("equals");
    await page.getByLabel("Value").fill(String(id));
    await page.getByRole("button", { name: "Add filter" }).click();
    await page.getByRole("status").filter({ hasText: "Rows 1–1 of 1" }).waitFor();
    await page.getByRole("button", { name: `Open post ${id}` }).click();
    const panel = page.getByRole("complementary", { name: `post ${id}` });
    expect(await panel.getByLabel("id", { exact: true }).isDisabled()).toBe(true);
    await panel.getByLabel("title", { exact: true }).fill("Edited in the browser");
    await panel.getByRole("button", { name: "Save" }).click();
    await panel.waitFor({ state: "detached" });
    expect((await db$().selectFrom("post").select("title").where("id", "=", id).executeTakeFirstOrThrow()).title).toBe("Edited in the browser");
    await page.getByRole("cell", { name: "Edited in the browser" }).waitFor();

    await page.getByRole("button", { name: `Open post ${id}` }).click();
    await panel.getByRole("button", { name: "Delete" }).click();
    await panel.getByRole("button", { name: "Confirm delete" }).click();
    await page.getByRole("status").filter({ hasText: "No rows" }).waitFor();
    expect(await db$().selectFrom("post").select("id").where("id", "=", id).executeTakeFirst()).toBeUndefined();
  });

  it("shows credential tables read-only with their secrets redacted", async () => {
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: /session/ }).click();
    await page.getByRole("table", { name: "session rows" }).waitFor();
    expect(await page.getByRole("button", { name: "New row" }).count()).toBe(0);
    expect(await page.getByText(/Read-only/).isVisible()).toBe(true);
    const tokens = await page.getByRole("table", { name: "session rows" }).locator("td.redacted").allTextContents();
    expect(tokens.length).toBeGreaterThan(0);
    expect(new Set(tokens)).toEqual(new Set(["[redacted]"]));
    const html = await page.content();
    for (const { token } of await db$().selectFrom("session").select("token").execute()) expect(html).not.toContain(token);
  });

  it("takes the screenshot for docs/admin.md", async () => {
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: /post/ }).click();
    await page.getByRole("status").filter({ hasText: "of 30" }).waitFor();
    await page.getByLabel("Filter column").selectOption("views");
    await page.getByLabel("Operator").selectOption("gte");
    await page.getByLabel("Value").fill("30");
    await page.getByRole("button", { name: "Add filter" }).click();
    await page.getByRole("status").filter({ hasText: "of 20" }).waitFor();
    await page.getByRole("button", { name: "Open post 12" }).click();
    await page.getByRole("complementary", { name: "post 12" }).waitFor();
    await page.screenshot({ path: shot("admin-dashboard.png") });
    await page.getByRole("button", { name: "Close" }).click();
  });

  /** What the reader's own cookie gets from the API now: the effect of an action, seen from outside. */
  const readerCalls = async (name: string) =>
    (await running.app.handle(new Request(`${url}/rpc/${name}`, { method: "POST", headers: { cookie: reader.cookie, "content-type": "application/json" }, body: "{}" }))).status;

  it("users: searches, opens a user with their sessions, sets roles, bans and unbans, revokes sessions", async () => {
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("status").filter({ hasText: "of 2" }).waitFor();
    await page.getByLabel("Email or name").fill("READER");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("status").filter({ hasText: "Users 1–1 of 1" }).waitFor();
    await page.getByRole("button", { name: "reader@example.test" }).click();
    const panel = page.getByRole("complementary", { name: "User reader@example.test" });
    await panel.getByRole("table", { name: "sessions" }).waitFor();
    expect(await panel.getByRole("table", { name: "sessions" }).locator("tbody tr").count()).toBe(1);
    expect(await panel.getByText("credential (password set)").isVisible()).toBe(true);

    // Roles: the reader becomes an admin on their very next request, then stops being one.
    await panel.getByLabel("Roles").fill("user, admin");
    await panel.getByRole("button", { name: "Save roles" }).click();
    await panel.getByRole("status").filter({ hasText: "Roles saved" }).waitFor();
    expect((await db$().selectFrom("user").select("role").where("id", "=", reader.userId).executeTakeFirstOrThrow()).role).toBe("user,admin");
    expect(await readerCalls("_admin/meta")).toBe(200);
    await panel.getByLabel("Roles").fill("user");
    await panel.getByRole("button", { name: "Save roles" }).click();
    await expect.poll(async () => (await db$().selectFrom("user").select("role").where("id", "=", reader.userId).executeTakeFirstOrThrow()).role).toBe("user");
    expect(await readerCalls("_admin/meta")).toBe(403);

    // Ban with a reason and an end: the row says so, the sessions are gone, the cookie is refused.
    await panel.getByLabel("Ban reason").fill("posting spam");
    await panel.getByLabel("Ban until").fill("2099-01-01T12:00");
    await panel.getByRole("button", { name: "Ban" }).click();
    await panel.getByText(/banned: posting spam \(until 2099/).waitFor();
    const banned = await db$().selectFrom("user").selectAll().where("id", "=", reader.userId).executeTakeFirstOrThrow();
    expect(Boolean(banned.banned)).toBe(true);
    expect(banned.banReason).toBe("posting spam");
    expect(await db$().selectFrom("session").select("id").where("userId", "=", reader.userId).execute()).toEqual([]);
    expect(await readerCalls("post/create")).toBe(401);
    await panel.getByRole("button", { name: "Unban" }).click();
    await panel.getByText("State").waitFor();
    await expect.poll(async () => Boolean((await db$().selectFrom("user").select("banned").where("id", "=", reader.userId).executeTakeFirstOrThrow()).banned)).toBe(false);

    // A fresh sign-in, then that session revoked from the panel.
    reader = await signIn(running.app, "reader@example.test", PASSWORD);
    await panel.getByRole("button", { name: "Close" }).click();
    await page.getByRole("button", { name: "reader@example.test" }).click();
    await panel.getByRole("button", { name: /^Revoke session from/ }).click();
    await panel.getByText("No sessions.").waitFor();
    expect(await readerCalls("post/create")).toBe(401);
    expect(await panel.getByRole("button", { name: "Send a password reset" }).count()).toBe(0);
    await page.screenshot({ path: shot("admin-users.png") });
    await panel.getByRole("button", { name: "Close" }).click();
    reader = await signIn(running.app, "reader@example.test", PASSWORD);
  });

  it("users: creates a user who can then sign in", async () => {
    await page.getByRole("button", { name: "New user" }).click();
    const panel = page.getByRole("complementary", { name: "New user" });
    await panel.getByLabel("Email").fill("made@example.test");
    await panel.getByLabel("Name").fill("Made Here");
    await panel.getByLabel("Password").fill("a-long-enough-password");
    await panel.getByRole("button", { name: "Create user" }).click();
    await page.getByRole("complementary", { name: "User made@example.test" }).waitFor();
    const made = await db$().selectFrom("user").selectAll().where("email", "=", "made@example.test").executeTakeFirstOrThrow();
    expect(made).toMatchObject({ name: "Made Here", role: "user" });
    expect((await signIn(running.app, "made@example.test", "a-long-enough-password")).userId).toBe(made.id);
    await page.getByRole("complementary", { name: "User made@example.test" }).getByRole("button", { name: "Close" }).click();
  });

  it("schema and health: reachable services, versions with checksums, columns, indexes and resource rules", async () => {
    await page.getByRole("link", { name: "Schema and health" }).click();
    await page.getByText(/Database: reachable/).waitFor();
    expect(await page.getByText("Key/value store: not configured").isVisible()).toBe(true);
    const versions = page.getByRole("table", { name: "applied versions" });
    await versions.getByRole("cell", { name: "0002_2" }).waitFor();
    expect(await versions.getByText("matches the code").count()).toBe(2);
    expect(await page.getByRole("table", { name: "post columns" }).getByRole("cell", { name: "user.id" }).isVisible()).toBe(true);
    expect(await page.getByText(/Resource rules: list public, get public, create authenticated, update authenticated, delete admin/).isVisible()).toBe(true);
    expect(await page.getByText(/session_token_key \(unique: token\)/).isVisible()).toBe(true);
    await page.screenshot({ path: shot("admin-schema.png"), fullPage: false });
  });

  it("activity: the last requests appear live, filterable by status and path", async () => {
    await page.getByRole("link", { name: "Activity" }).click();
    await page.getByText(/The last 500 requests of the replica/).waitFor();
    await running.app.handle(new Request(`${url}/rpc/post/list`, { method: "POST", headers: { cookie: reader.cookie, "content-type": "application/json", "x-request-id": "seen-in-the-browser" }, body: "{}" }));
    await running.app.handle(new Request(`${url}/no-such-page`, { headers: { "x-request-id": "missing-page" } }));
    const table = page.getByRole("table", { name: "requests" });
    await table.getByRole("cell", { name: "missing-page" }).waitFor({ timeout: 5_000 });
    const row = table.locator("tr", { has: page.getByRole("cell", { name: "seen-in-the-browser" }) });
    expect(await row.locator("td").allTextContents()).toEqual([expect.any(String), "POST", "/rpc/post/list", "200", expect.any(String), reader.userId, "seen-in-the-browser"]);
    await page.getByLabel("Status").selectOption("4");
    await page.getByLabel("Path contains").fill("no-such");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByRole("status").filter({ hasText: "1 requests shown" }).waitFor();
    expect(await table.locator("tbody tr").first().locator("td").nth(3).textContent()).toBe("404");
    await page.screenshot({ path: shot("admin-activity.png") });
  });

  it("is usable at 390 px wide and in the dark, and reachable by keyboard", async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("status").filter({ hasText: "of 3" }).waitFor();
    // Nothing wider than the screen but the tables' own scrolling boxes.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).not.toBe("rgb(246, 247, 249)");
    await page.screenshot({ path: shot("admin-narrow-dark.png") });
    // The search field and its button are reached with Tab from the field.
    await page.getByLabel("Email or name").focus();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Search");
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("refuses a signed-in user without an admin role with a clear page", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await signInAs("reader@example.test");
    await page.getByRole("heading", { name: "Not allowed" }).waitFor();
    expect(await page.getByText("no admin role").isVisible()).toBe(true);
    expect(await page.getByRole("navigation", { name: "Tables" }).count()).toBe(0);
  });
});
