/**
 * The dashboard's row panel with `.audit()`: a row's history as diffs, "Restore this version", and a user's activity,
 * in Chromium (as test/admin/dashboard.test.ts). Skips, saying why, without a browser.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { serve, type RunningServer } from "../../presets/node.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { signUp } from "../support/auth.js";
import { freePort, launchChromium } from "../support/browser.js";
import { adminApp } from "../admin/fixture.js";

const PASSWORD = "correct-horse-battery-staple";
const { profile, context, unavailable } = await launchChromium("trellis-audit-history-chromium-", "the dashboard history suite");

describe.skipIf(unavailable !== undefined)("a row's history in the dashboard", () => {
  let db: TestDatabase;
  let running: RunningServer;
  let page: Page;
  let url: string;
  let id: number;

  beforeAll(async () => {
    db = await openDatabase("sqlite");
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    running = await serve(adminApp({ dialect: db.dialect, kind: db.kind }, {}, url).audit(), { port, hostname: "127.0.0.1", handleSignals: false });
    const boss = await signUp(running.app, "boss@example.test", PASSWORD);
    await running.app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
    id = (await running.app.db.insertInto("post").values({ title: "first title", views: 1 }).returning("id").executeTakeFirstOrThrow()).id as number;
    await running.app.db.updateTable("post").set({ title: "second title" }).where("id", "=", id).execute();
    page = await context!.newPage();
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    await running?.close();
    await db?.close();
  });

  it("shows each change as a diff and restores an earlier version", async () => {
    await page.goto(`${url}/_admin#/table/post`);
    await page.getByLabel("Email").fill("boss@example.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
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
