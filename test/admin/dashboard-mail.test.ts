/**
 * The dashboard's mail view in Chromium (as in dashboard.test.ts): the outbox with each message's
 * state and link, and "Send a password reset" on a user row. Skips, saying why, without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { RunningServer } from "../../presets/node.js";
import { signUp } from "../support/auth.js";
import { pressTabUntil } from "../support/browser.js";
import { dashboardSuite, PASSWORD, signUpAdmin } from "../support/dashboard.js";
import { mailApp, mailOf } from "../mail/fixture.js";

const dashboard = await dashboardSuite("trellis-admin-mail-chromium-", "the dashboard mail suite");

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's mail view in Chromium", () => {
  let running: RunningServer;
  let page: Page;
  let url: string;
  let unaId: string;

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve((url, db) => mailApp(db, {}, { trustedOrigins: [new URL(url).origin] }, { baseUrl: url })));
    await signUpAdmin(running.app);
    unaId = (await signUp(running.app, "una@example.test", PASSWORD)).userId;
    await mailOf(running.app).flush();
  }, 60_000);

  afterAll(() => dashboard.close());

  it("lists the messages with their state and link", async () => {
    await dashboard.signIn();
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: "Mail" }).click();
    const table = page.getByRole("table", { name: "Recent messages" });
    await table.waitFor();
    const row = table.getByRole("row").filter({ hasText: "una@example.test" });
    expect(await row.getByRole("cell", { name: "verify-email" }).isVisible()).toBe(true);
    expect(await row.getByRole("cell", { name: "sent" }).isVisible()).toBe(true);
    expect(await row.getByRole("link", { name: "open" }).getAttribute("href")).toMatch(/\/api\/auth\/verify-email\?token=/);
    await page.screenshot({ path: dashboard.shot("admin-mail.png") });
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
