/**
 * The dashboard's mail view in Chromium (as in dashboard.test.ts): the outbox with each message's
 * state and link, and "Send a password reset" on a user row. Skips, saying why, without a browser.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { serve, type RunningServer } from "../../presets/node.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { mailApp, mailOf, post, signUpBody, PASSWORD } from "../mail/fixture.js";
import { freePort, launchChromium, pressTabUntil, screenshotPath } from "../support/browser.js";


const { profile, context, unavailable } = await launchChromium("trellis-admin-mail-chromium-", "the dashboard mail suite");


describe.skipIf(unavailable !== undefined)("the dashboard's mail view in Chromium", () => {
  let db: TestDatabase;
  let running: RunningServer;
  let page: Page;
  let url: string;
  let unaId: string;

  beforeAll(async () => {
    db = await openDatabase("sqlite");
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const app = new URL(url);
    running = await serve(mailApp({ dialect: db.dialect, kind: db.kind }, {}, { trustedOrigins: [app.origin] }, { baseUrl: url }), { port, hostname: "127.0.0.1", handleSignals: false });
    const boss = await post(running.app, "/api/auth/sign-up/email", signUpBody("boss@example.test"));
    const una = await post(running.app, "/api/auth/sign-up/email", signUpBody("una@example.test"));
    unaId = una.body.user.id;
    await running.app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.body.user.id).execute();
    await mailOf(running.app).flush();
    page = await context!.newPage();
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    await running?.close();
    await db?.close();
  });

  it("lists the messages with their state and link", async () => {
    await page.goto(`${url}/_admin`);
    await page.getByLabel("Email").fill("boss@example.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: "Mail" }).click();
    const table = page.getByRole("table", { name: "Recent messages" });
    await table.waitFor();
    const row = table.getByRole("row").filter({ hasText: "una@example.test" });
    expect(await row.getByRole("cell", { name: "verify-email" }).isVisible()).toBe(true);
    expect(await row.getByRole("cell", { name: "sent" }).isVisible()).toBe(true);
    expect(await row.getByRole("link", { name: "open" }).getAttribute("href")).toMatch(/\/api\/auth\/verify-email\?token=/);
    await page.screenshot({ path: screenshotPath(profile, "admin-mail.png") });
    // By keyboard too: from the top of a fresh page, Tab reaches the nav item, Enter opens it, Tab reaches Refresh.
    await page.goto("about:blank");
    await page.goto(`${url}/_admin#/`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    await pressTabUntil(page, page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: "Mail" }));
    await page.keyboard.press("Enter");
    await table.waitFor();
    await pressTabUntil(page, page.getByRole("button", { name: "Refresh" }));
  });

  it("sends a password reset from a user row", async () => {
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: /user/ }).click();
    await page.getByRole("button", { name: `Open user ${unaId}` }).click();
    const panel = page.getByRole("complementary", { name: `user ${unaId}` });
    await panel.getByRole("button", { name: "Send a password reset" }).click();
    await panel.getByRole("status").filter({ hasText: "Password reset sent to una@example.test" }).waitFor();
    await mailOf(running.app).flush();
    const kinds = await running.app.db.selectFrom("trellis_mail" as never).select("kind" as never).where("to_address" as never, "=", "una@example.test" as never).execute();
    expect(kinds.map((row) => (row as { kind: string }).kind).sort()).toEqual(["reset-password", "verify-email"]);
  });
});
