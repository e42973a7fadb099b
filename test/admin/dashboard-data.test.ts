/**
 * The table page's bulk delete and exports, and the procedure runner, in Chromium (as in
 * dashboard.test.ts): each action checked in the database and on the API afterwards. Skips, saying
 * why, without a browser.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { RunningServer } from "../../presets/node.js";
import { dashboardSuite, signUpAdmin } from "../support/dashboard.js";
import { runnerApp } from "./runner-fixture.js";

const EVIL = '=HYPERLINK("http://evil.test","click")';

const dashboard = await dashboardSuite("trellis-admin-data-chromium-", "the dashboard data suite");
const { shot } = dashboard;

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's bulk delete, exports and procedure runner in Chromium", () => {
  let running: RunningServer;
  let page: Page;
  let url: string;

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve((url, db) => runnerApp(db, {}, url)));
    await signUpAdmin(running.app);
    const titles: Record<number, string> = { 5: EVIL, 6: "+1", 7: "-2", 8: "@cmd", 9: "café, ☕" };
    await running.app.db
      .insertInto("post")
      .values(Array.from({ length: 12 }, (_, i) => ({ title: titles[i] ?? `post ${String(i).padStart(2, "0")}`, views: i })))
      .execute();
  }, 60_000);

  afterAll(() => dashboard.close());

  const db$ = () => running.app.db;
  const status = (text: string) => page.getByRole("status").filter({ hasText: text }).waitFor();
  /** What the API answers now for `post.get` (public): the deletion seen from outside. */
  const postStatus = async (id: number) =>
    (await running.app.handle(new Request(`${url}/rpc/post/get`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { where: { id } } }) }))).status;

  it("selects rows on a page and deletes them after a confirmation", async () => {
    await dashboard.signIn("/_admin#/table/post");
    await status("Rows 1–12 of 12");
    const [first, second] = (await db$().selectFrom("post").select("id").orderBy("id").limit(2).execute()).map((row) => row.id);

    // Select all on the page, then none again.
    await page.getByLabel("Select all on this page").check();
    await page.getByRole("button", { name: "Delete selected (12)" }).waitFor();
    await page.getByLabel("Select all on this page").uncheck();
    expect(await page.getByRole("button", { name: /^Delete selected/ }).count()).toBe(0);

    await page.getByLabel(`Select post ${first}`, { exact: true }).check();
    await page.getByLabel(`Select post ${second}`, { exact: true }).check();
    await page.getByRole("button", { name: "Delete selected (2)" }).click();
    await page.getByRole("button", { name: "Confirm delete of 2 rows" }).waitFor();
    expect(await db$().selectFrom("post").select("id").where("id", "in", [first!, second!]).execute()).toHaveLength(2);
    await page.screenshot({ path: shot("admin-bulk.png") });
    await page.getByRole("button", { name: "Confirm delete of 2 rows" }).click();
    await status("Rows 1–10 of 10");
    expect(await db$().selectFrom("post").select("id").where("id", "in", [first!, second!]).execute()).toEqual([]);
    expect([await postStatus(first!), await postStatus(second!)]).toEqual([404, 404]);
    await expect.poll(() => page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: /post/ }).textContent()).toContain("10");
  });

  it("exports the current filter and sort as CSV and JSON", async () => {
    await page.getByLabel("Filter column").selectOption("views");
    await page.getByLabel("Operator").selectOption("gte");
    await page.getByLabel("Value").fill("5");
    await page.getByRole("button", { name: "Add filter" }).click();
    await status("Rows 1–7 of 7");
    await page.getByRole("button", { name: "views", exact: true }).click();
    await page.getByRole("button", { name: "views ▲" }).waitFor();
    const expected = await db$().selectFrom("post").selectAll().where("views", ">=", 5).orderBy("views", "asc").execute();

    const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
    expect(csv.suggestedFilename()).toBe("post.csv");
    const text = readFileSync((await csv.path())!, "utf8");
    const lines = text.split("\r\n");
    expect(lines[0]).toBe("id,title,body,views,authorId,published");
    expect(lines.slice(1, -1).map((line) => Number(line.split(",")[0]))).toEqual(expected.map((row) => row.id));
    expect(lines[1]).toBe(`${expected[0]!.id},"'=HYPERLINK(""http://evil.test"",""click"")",,5,,false`);
    expect(lines[2]).toBe(`${expected[1]!.id},'+1,,6,,false`);
    expect(lines[5]).toBe(`${expected[4]!.id},"café, ☕",,9,,false`);

    const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export JSON" }).click()]);
    expect(json.suggestedFilename()).toBe("post.json");
    const rows = JSON.parse(readFileSync((await json.path())!, "utf8"));
    expect(rows.map((row: { views: number }) => row.views)).toEqual([5, 6, 7, 8, 9, 10, 11]);
    expect(rows[0]).toEqual({ id: expected[0]!.id, title: EVIL, body: null, views: 5, authorId: null, published: false });
  });

  it("runs a procedure from a form built from its input schema, as the signed-in admin", async () => {
    await page.getByRole("link", { name: "Procedures" }).click();
    await page.getByLabel("Procedure").selectOption("math.add");
    const form = page.getByRole("form", { name: "Run math.add" });
    await form.getByLabel("a", { exact: true }).fill("2");
    await form.getByLabel("b", { exact: true }).fill("3");
    expect(await form.getByLabel("mode").inputValue()).toBe("sum");
    await form.getByLabel("tags").fill("red\nblue");
    await form.getByLabel("loud").selectOption("true");
    await form.getByRole("button", { name: "Run" }).click();
    const result = form.getByRole("region", { name: "Result" });
    await result.waitFor();
    expect(JSON.parse((await result.locator("pre").textContent())!)).toEqual({ result: 5, note: null, tags: ["red", "blue"], loud: true });

    // The procedure's own validation: its 400 and message, as any caller gets them.
    await form.getByLabel("note").fill("ab");
    await form.getByRole("button", { name: "Run" }).click();
    const alert = form.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^400 BAD_REQUEST: .*note/);
    await page.evaluate(() => scrollTo(0, 0));
    await page.screenshot({ path: shot("admin-runner.png") });

    // The caller is the admin: their session reaches the procedure.
    await page.getByLabel("Procedure").selectOption("whoami");
    await page.getByRole("form", { name: "Run whoami" }).getByRole("button", { name: "Run" }).click();
    await page.getByRole("region", { name: "Result" }).getByText('"email": "boss@example.test"').waitFor();

    // A resource's create: the row is in the database.
    await page.getByLabel("Procedure").selectOption("post.create");
    const create = page.getByRole("form", { name: "Run post.create" });
    await create.getByLabel("title").fill("Made by the runner");
    await create.getByLabel("views").fill("7");
    await create.getByRole("button", { name: "Run" }).click();
    await create.getByRole("region", { name: "Result" }).waitFor();
    expect(await db$().selectFrom("post").select("views").where("title", "=", "Made by the runner").executeTakeFirstOrThrow()).toEqual({ views: 7 });

    // An input the form cannot show (a nested object) is raw JSON.
    await page.getByLabel("Procedure").selectOption("post.get");
    const get = page.getByRole("form", { name: "Run post.get" });
    await get.getByLabel("Input (JSON)").fill(JSON.stringify({ where: { id: -1 } }));
    await get.getByRole("button", { name: "Run" }).click();
    expect(await get.getByRole("alert").textContent()).toMatch(/^404 NOT_FOUND/);
  });
});
