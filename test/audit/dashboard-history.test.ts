/**
 * The dashboard's row panel with `.audit()`: a row's history as diffs, "Restore this version", and a user's activity,
 * in Chromium (as test/admin/dashboard.test.ts). Skips, saying why, without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { RunningServer } from "../../presets/node.js";
import { dashboardSuite, signUpAdmin } from "../support/dashboard.js";
import { adminApp } from "../admin/fixture.js";

const dashboard = await dashboardSuite("trellis-audit-history-chromium-", "the dashboard history suite");

describe.skipIf(dashboard.unavailable !== undefined)("a row's history in the dashboard", () => {
  let running: RunningServer;
  let page: Page;
  let id: number;

  beforeAll(async () => {
    ({ running, page } = await dashboard.serve((url, db) => adminApp(db, {}, url).audit()));
    await signUpAdmin(running.app);
    id = (await running.app.db.insertInto("post").values({ title: "first title", views: 1 }).returning("id").executeTakeFirstOrThrow()).id as number;
    await running.app.db.updateTable("post").set({ title: "second title" }).where("id", "=", id).execute();
  }, 60_000);

  afterAll(() => dashboard.close());

  it("shows each change as a diff and restores an earlier version", async () => {
    await dashboard.signIn("/_admin#/table/post");
    await page.getByRole("button", { name: `Open post ${id}` }).click();
    const panel = page.getByRole("complementary", { name: `post ${id}` });
    const history = panel.getByRole("region", { name: "History" });
    await history.getByRole("article").first().waitFor();
    const [updated, created] = await history.getByRole("article").all();
    expect(await updated!.getByRole("row", { name: /title/ }).innerText()).toMatch(/title\s+first title\s+second title/);
    expect(await created!.innerText()).toMatch(/^Created/);
    await created!.getByRole("button", { name: "Restore this version" }).click();
    await panel.waitFor({ state: "detached" });
    expect((await running.app.db.selectFrom("post").select("title").where("id", "=", id).executeTakeFirstOrThrow()).title).toBe("first title");
  });

  it("shows what a user changed in their panel", async () => {
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("button", { name: "boss@example.test" }).click();
    const activity = page.getByRole("complementary", { name: "User boss@example.test" }).getByRole("region", { name: "Activity" });
    await activity.getByRole("listitem").first().waitFor();
    // The restore above was the administrator's.
    expect(await activity.getByRole("listitem").first().innerText()).toMatch(new RegExp(`^Updated post ${id} \\(.*title.*\\)`));
  });
});
