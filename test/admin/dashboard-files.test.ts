/**
 * The dashboard's files view in Chromium (as in dashboard.test.ts), and the whole dashboard proven
 * usable: every view walked with the keyboard alone (Tab, Enter, Escape, a visible focus ring), no
 * horizontal page overflow at 1280x800 or 390 px wide, light and dark following the system.
 * Skips, saying why, without a browser.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Locator, Page } from "playwright-core";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import type { RunningServer } from "../../presets/node.js";
import { signUp } from "../support/auth.js";
import { pressTabUntil } from "../support/browser.js";
import { dashboardSuite, PASSWORD, signUpAdmin } from "../support/dashboard.js";
import { adminApp, v2 } from "./fixture.js";

const v3 = schema("3").extend(v2).files({ attachTo: ["post"] }).build();
const dashboard = await dashboardSuite("trellis-admin-files-chromium-", "the dashboard files suite");
const { context, shot } = dashboard;

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's files view, keyboard and layout, in Chromium", { timeout: 120_000 }, () => {
  let running: RunningServer;
  let page: Page;
  let url: string;
  let png: Buffer;
  const storage = memoryStorage();
  /** Script errors and console errors (a CSP violation is one), but the signed-out page's expected 401. */
  const errors: string[] = [];

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve((url, db) => adminApp(db, {}, url).schema(v3).files({ storage })));
    const boss = await signUpAdmin(running.app);
    await signUp(running.app, "reader@example.test", PASSWORD);
    await running.app.db.insertInto("post").values(Array.from({ length: 3 }, (_, i) => ({ title: `post ${i}`, authorId: boss.userId }))).execute();
    // A step that cannot happen fails with its own message, well before the test's time is up.
    page.setDefaultTimeout(30_000);
    // A real PNG to upload: Chromium draws one.
    await page.setContent(`<div style="width:64px;height:64px;background:linear-gradient(135deg,#2f6fde,#2e8540)"></div>`);
    png = await page.screenshot({ clip: { x: 8, y: 8, width: 64, height: 64 } });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => message.type() === "error" && !message.text().includes("401") && errors.push(message.text()));
  }, 60_000);

  afterAll(() => dashboard.close());

  const nav = () => page.getByRole("navigation", { name: "Tables" });
  const fileRow = async (name: string) => running.app.db.selectFrom("file").selectAll().where("name", "=", name).executeTakeFirst();
  const adminCall = (name: string, input: unknown, cookie: string) =>
    running.app.handle(new Request(`${url}/rpc/${name.replaceAll(".", "/")}`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify({ json: input }) }));

  it("uploads a file, lists it with its preview, downloads the same bytes and deletes row and bytes", async () => {
    await dashboard.signIn("/_admin#/files");
    await page.getByRole("heading", { name: "Files", level: 1 }).waitFor();
    await page.getByRole("status").filter({ hasText: "No files" }).waitFor();

    // Two uploads: the picture, and an SVG that must never be drawn as a preview.
    await page.getByLabel("File", { exact: true }).setInputFiles({ name: "cover.png", mimeType: "image/png", buffer: png });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.getByRole("status").filter({ hasText: "Uploaded cover.png" }).waitFor();
    await page.getByLabel("File", { exact: true }).setInputFiles({ name: "logo.svg", mimeType: "image/svg+xml", buffer: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>") });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.getByRole("status").filter({ hasText: "Files 1–2 of 2" }).waitFor();

    const stored = (await fileRow("cover.png"))!;
    expect(stored).toMatchObject({ type: "image/png", size: png.byteLength });
    expect(Buffer.from((await storage.get(stored.key))!)).toEqual(png);
    // What it is attached to: a post, through the pivot, shown once the list reloads.
    const [post] = await running.app.db.selectFrom("post").select("id").orderBy("id").limit(1).execute();
    await running.app.db.insertInto("post_file").values({ fileId: stored.id, entityId: post!.id, role: "cover" }).execute();
    await page.getByRole("button", { name: "Search" }).click();
    const table = page.getByRole("table", { name: "files" });
    const row = table.getByRole("row").filter({ hasText: "cover.png" });
    await row.getByRole("link", { name: `post ${post!.id}` }).waitFor();
    expect(await row.textContent()).toContain("(cover)");
    expect(await row.getByRole("cell", { name: "boss@example.test" }).isVisible()).toBe(true);

    // The preview is the uploaded picture, fetched through the admin route; the SVG gets none.
    const preview = row.getByRole("img", { name: "Preview of cover.png" });
    await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
    expect(await table.getByRole("img").count()).toBe(1);
    expect(await table.getByRole("row").filter({ hasText: "logo.svg" }).getByText("none").isVisible()).toBe(true);
    await page.screenshot({ path: shot("admin-files.png") });

    const [download] = await Promise.all([page.waitForEvent("download"), row.getByRole("link", { name: "Download cover.png" }).click()]);
    expect(download.suggestedFilename()).toBe("cover.png");
    expect(readFileSync((await download.path())!)).toEqual(png);

    await row.getByRole("button", { name: "Delete cover.png" }).click();
    await row.getByRole("button", { name: "Confirm delete cover.png" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted cover.png" }).waitFor();
    await page.getByRole("status").filter({ hasText: "Files 1–1 of 1" }).waitFor();
    expect(await fileRow("cover.png")).toBeUndefined();
    expect(await running.app.db.selectFrom("post_file").selectAll().execute()).toEqual([]);
    expect(await storage.get(stored.key)).toBeNull();
    const cookie = (await context!.cookies(url)).map((c) => `${c.name}=${c.value}`).join("; ");
    expect((await adminCall("_admin.files.get", { id: stored.id }, cookie)).status).toBe(404);
    expect((await running.app.handle(new Request(`${url}/_admin/files/${stored.id}`, { headers: { cookie } }))).status).toBe(404);
  });

  const tabTo = (target: Locator, max?: number) => pressTabUntil(page, target, max);
  const focused = (target: Locator) => target.evaluate((el) => el === document.activeElement);

  /** Opens the overview afresh, so the Tab order starts at the top of the page. */
  async function fromTop() {
    // A new document (a change of hash alone would keep the focus where it was).
    await page.goto("about:blank");
    await page.goto(`${url}/_admin#/`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  }
  async function openWithKeyboard(link: string, heading: string) {
    await fromTop();
    await tabTo(nav().getByRole("link", { name: link, exact: true }));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
  }

  it("walks every view with the keyboard alone: Tab reaches each nav item and action, Enter acts, Escape closes", async () => {
    await running.app.db.insertInto("file").values({ id: "kbd", key: "files/kbd", name: "keys.txt", type: "text/plain", size: 1 }).execute();
    await storage.set("files/kbd", new Uint8Array([1]));
    // Every nav item, in order, from the top of the page.
    await fromTop();
    const items = ["Overview", "Users", "Schema and health", "Activity", "Files"];
    for (const name of items) await tabTo(nav().getByRole("link", { name, exact: true }), 10);
    for (const table of ["user", "session", "account", "verification", "post"]) await tabTo(nav().getByRole("link", { name: new RegExp(`^${table} `) }), 10);

    // Overview: a table link in the page opens that table.
    await fromTop();
    await tabTo(page.getByRole("main").getByRole("link", { name: "post", exact: true }));
    await page.keyboard.press("Enter");
    await page.getByRole("table", { name: "post rows" }).waitFor();
    // A table page: the actions, then a row opened with Enter and closed with Escape, focus back on its button.
    for (const label of ["Filter column", "Operator", "Value"]) await tabTo(page.getByLabel(label));
    await tabTo(page.getByRole("button", { name: "Add filter" }));
    const open = page.getByRole("button", { name: /^Open post / }).first();
    await tabTo(open);
    await page.keyboard.press("Enter");
    const panel = page.getByRole("complementary", { name: /^post / });
    await panel.waitFor();
    expect(await focused(panel.getByRole("button", { name: "Close" }))).toBe(true);
    await tabTo(panel.getByLabel("title", { exact: true }), 5);
    await page.keyboard.press("Escape");
    await panel.waitFor({ state: "detached" });
    expect(await focused(open)).toBe(true);

    await openWithKeyboard("Users", "Users");
    await tabTo(page.getByRole("button", { name: "New user" }));
    await page.keyboard.press("Enter");
    const fresh = page.getByRole("complementary", { name: "New user" });
    await fresh.waitFor();
    await page.keyboard.press("Escape");
    await fresh.waitFor({ state: "detached" });
    await tabTo(page.getByLabel("Email or name"));
    await tabTo(page.getByRole("button", { name: "Search" }));
    await tabTo(page.getByRole("button", { name: "reader@example.test" }));
    await page.keyboard.press("Enter");
    const user = page.getByRole("complementary", { name: "User reader@example.test" });
    await user.getByRole("button", { name: "Save roles" }).waitFor();
    expect(await focused(user.getByRole("button", { name: "Close" }))).toBe(true);
    await tabTo(user.getByRole("button", { name: "Save roles" }), 10);
    await page.keyboard.press("Escape");
    await user.waitFor({ state: "detached" });

    await openWithKeyboard("Schema and health", "Schema and health");
    await tabTo(page.getByRole("button", { name: "Check again" }));

    await openWithKeyboard("Activity", "Activity");
    for (const label of ["Status", "Path contains"]) await tabTo(page.getByLabel(label));
    await tabTo(page.getByRole("button", { name: "Apply" }));
    await tabTo(page.getByRole("button", { name: "Pause" }));

    await openWithKeyboard("Files", "Files");
    await tabTo(page.getByLabel("File", { exact: true }));
    await tabTo(page.getByRole("button", { name: "Upload" }));
    await tabTo(page.getByLabel("Name or type"));
    await tabTo(page.getByRole("button", { name: "Search" }));
    await tabTo(page.getByRole("link", { name: "Download keys.txt" }));
    const remove = page.getByRole("button", { name: "Delete keys.txt" });
    await tabTo(remove);
    // Enter asks, Escape takes it back; the focus never leaves the button.
    await page.keyboard.press("Enter");
    const confirm = page.getByRole("button", { name: "Confirm delete keys.txt" });
    await confirm.waitFor();
    expect(await focused(confirm)).toBe(true);
    await page.keyboard.press("Escape");
    await remove.waitFor();
    expect(await focused(remove)).toBe(true);
    expect(await fileRow("keys.txt")).toBeDefined();
  }, 60_000);

  const VIEWS = [
    ["#/", "Overview"],
    ["#/table/post", "post"],
    ["#/users", "Users"],
    ["#/schema", "Schema and health"],
    ["#/activity", "Activity"],
    ["#/files", "Files"],
  ] as const;
  const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - innerWidth);

  it("fits every view at 1280x800 and 390 px wide without page overflow, light and dark as the system is", async () => {
    for (const [size, scheme] of [[{ width: 1280, height: 800 }, "light"], [{ width: 390, height: 800 }, "dark"]] as const) {
      await page.setViewportSize(size);
      await page.emulateMedia({ colorScheme: scheme });
      for (const [hash, heading] of VIEWS) {
        await page.goto(`${url}/_admin${hash}`);
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
        await page.getByRole("table").first().waitFor();
        expect(await overflow(), `${hash} at ${size.width} px`).toBeLessThanOrEqual(0);
      }
    }
    // The same page, the system switched: the background follows.
    const dark = await background();
    await page.emulateMedia({ colorScheme: "light" });
    const light = await background();
    expect(light).toBe("rgb(246, 247, 249)");
    expect(dark).not.toBe(light);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${url}/_admin#/`);
    await page.getByRole("heading", { name: "Migrations" }).waitFor();
    await page.getByRole("cell", { name: "0003_3" }).waitFor();
    await page.screenshot({ path: shot("admin-overview.png") });
    // Nothing refused by the strict CSP, no script error, in any view.
    expect(errors, errors.join("\n")).toEqual([]);
  });
});
