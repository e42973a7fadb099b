/**
 * The table page's cursor pager, search box and nearest rows in Chromium (as in
 * dashboard-data.test.ts), on the embedded database (full-text index and pgvector). Skips, saying
 * why, without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { RunningServer } from "../../presets/node.js";
import { App } from "../../presets/trellis.js";
import { schema } from "../../kernel/schema/index.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import { pressTabUntil } from "../support/browser.js";
import { dashboardSuite, signUpAdmin } from "../support/dashboard.js";
import { SECRET } from "./fixture.js";

const v1 = schema("1")
  .auth()
  .table("doc", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    views: t.integer().default(0),
    embedding: t.vector(3).nullable(),
  }))
  .search("doc", ["title"])
  .build();

const searchApp = (db: DatabaseConfig, baseUrl: string) =>
  new App({ name: "Dashboard search", baseUrl, db }).schema(v1).auth({ secret: SECRET, emailAndPassword: { enabled: true } }).admin();

const dashboard = await dashboardSuite("trellis-admin-search-chromium-", "the dashboard search suite");

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's cursor pager, search and nearest rows in Chromium", { timeout: 120_000 }, () => {
  let running: RunningServer;
  let page: Page;
  /** The `_admin.data.list` inputs the page sent, in order. */
  const lists: Record<string, unknown>[] = [];

  beforeAll(async () => {
    ({ running, page } = await dashboard.serve((url, db) => searchApp(db, url), { database: "pglite" }));
    await signUpAdmin(running.app);
    // 60 docs; every fifth says "alpha" (doc 30 twice); the vectors turn around the z axis, doc 60 has none.
    await running.app.db
      .insertInto("doc")
      .values(
        Array.from({ length: 60 }, (_, i) => ({
          title: i === 29 ? "alpha alpha thirty" : i % 5 === 0 ? `alpha doc ${i + 1}` : `doc ${i + 1}`,
          views: i % 4,
          embedding: i === 59 ? null : (JSON.stringify([Math.cos(i / 10), Math.sin(i / 10), 0]) as never),
        })),
      )
      .execute();
    // A step that never happens fails with its own message, well before the test times out.
    page.setDefaultTimeout(30_000);
    page.on("request", (request) => {
      if (request.url().endsWith("/rpc/_admin/data/list")) lists.push(JSON.parse(request.postData() ?? "{}").json);
    });
  }, 120_000);

  afterAll(() => dashboard.close());

  const status = (text: string | RegExp) => page.getByRole("status").filter({ hasText: text }).waitFor();
  /** The keys of the rows on the page, as their "Open doc N" buttons name them. */
  const shown = async () => (await page.getByRole("button", { name: /^Open doc \d+$/ }).allTextContents()).map(Number);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it("pages forward and back by cursor: a row deleted before the page does not shift the next one", async () => {
    await dashboard.signIn("/_admin#/table/doc");
    await status("Rows 1–25 of 60");
    expect(await shown()).toEqual(range(1, 25));
    expect(await page.getByRole("button", { name: "Previous page" }).isDisabled()).toBe(true);

    await page.getByRole("button", { name: "Next page" }).click();
    await status("Rows 26–50 of 60");
    expect(await shown()).toEqual(range(26, 50));
    // Gone from the first page while the second is shown: with an offset, the third would start at 52.
    await running.app.db.deleteFrom("doc").where("id", "=", 3).execute();
    await page.getByRole("button", { name: "Next page" }).click();
    // The last page ends at the total: 59 rows are left, so docs 51 to 60 are rows 50 to 59 of them.
    await status("Rows 50–59 of 59");
    expect(await shown()).toEqual(range(51, 60));
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);

    // Back by the stack of cursors, to the first page (no cursor).
    await page.getByRole("button", { name: "Previous page" }).click();
    await status("Rows 26–50 of 59");
    expect(await shown()).toEqual(range(26, 50));
    await page.getByRole("button", { name: "Previous page" }).click();
    await status("Rows 1–25 of 59");
    expect(await shown()).toEqual([1, 2, ...range(4, 26)]);

    const paged = lists.filter((input) => input.table === "doc");
    expect(paged.every((input) => input.page === true && input.skip === undefined)).toBe(true);
    expect(paged.map((input) => typeof input.after)).toEqual(["undefined", "string", "string", "string", "undefined"]);
    expect(paged[3]!.after).toBe(paged[1]!.after);
  });

  it("searches: best matches first by skip, and by cursor once a column is sorted", async () => {
    lists.length = 0;
    const box = page.getByRole("searchbox", { name: "Search" });
    // Reached from the keyboard, as every control of the page: the next stop after the filter form.
    await page.getByRole("button", { name: "Add filter" }).focus();
    await pressTabUntil(page, box, 3);
    await page.keyboard.type("alpha");
    await page.keyboard.press("Enter");
    await status("Rows 1–13 of 13, best matches first");
    expect((await shown())[0]).toBe(30);
    expect((await shown()).sort((a, b) => a - b)).toEqual([1, 6, 11, 16, 21, 26, 30, 31, 36, 41, 46, 51, 56]);
    expect(lists.at(-1)).toEqual({ table: "doc", search: "alpha", take: 25, skip: 0 });

    await page.getByRole("button", { name: "id", exact: true }).click();
    await page.getByRole("button", { name: "id ▲" }).waitFor();
    // Until the rows sorted by id have loaded: the status says "best matches first" while rank-ordered rows are shown.
    await status(/^Rows 1–13 of 13$/);
    expect(await shown()).toEqual([1, 6, 11, 16, 21, 26, 30, 31, 36, 41, 46, 51, 56]);
    expect(lists.at(-1)).toEqual({ table: "doc", search: "alpha", orderBy: [{ id: "asc" }], take: 25, page: true });
    // The exports select what the page does: the search and the sort.
    const query = new URLSearchParams({ orderBy: JSON.stringify([{ id: "asc" }]), search: "alpha" });
    expect(await page.getByRole("link", { name: "Export JSON" }).getAttribute("href")).toBe(`/_admin/export/doc.json?${query}`);
    await page.screenshot({ path: dashboard.shot("admin-search.png") });

    await page.getByRole("button", { name: "Clear search" }).click();
    await status("Rows 1–25 of 59");
    expect(await box.inputValue()).toBe("");
  });

  it("lists the rows similar to one, with their distance, and nearest to a pasted vector", async () => {
    await page.getByRole("button", { name: "Open doc 20", exact: true }).click();
    await page.getByRole("button", { name: "Similar rows" }).click();
    await status("25 rows nearest to doc 20 by embedding");
    // Turning around the z axis: doc 20's neighbours one step either side first, never doc 20 itself.
    const nearest = await shown();
    expect(nearest).toHaveLength(25);
    expect(nearest).not.toContain(20);
    expect(nearest.slice(0, 2).sort((a, b) => a - b)).toEqual([19, 21]);
    expect(lists.at(-1)).toEqual({ table: "doc", where: { id: { not: 20 } }, nearest: { column: "embedding", vector: expect.any(Array), k: 25 } });
    expect(await page.getByRole("columnheader", { name: "_distance" }).count()).toBe(1);
    // The _distance cells (the first cell of a row is its checkbox).
    const distances = (await page.locator("tbody tr td.num").allTextContents()).map(Number);
    expect(distances).toHaveLength(25);
    expect(distances[0]).toBeGreaterThan(0);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    expect(await page.getByRole("button", { name: "Next page" }).count()).toBe(0);
    expect(await page.getByRole("link", { name: "Export CSV" }).count()).toBe(0);
    await page.getByRole("button", { name: "Back to all rows" }).click();
    await status("Rows 1–25 of 59");

    await page.locator("summary", { hasText: "Nearest rows" }).click();
    const form = page.getByRole("form", { name: "Find nearest rows" });
    await form.getByLabel("Vector", { exact: true }).fill("[0, 1]");
    await form.getByRole("button", { name: "Find nearest" }).click();
    expect(await page.getByRole("alert").textContent()).toBe("Vector: expected 3 numbers, got 2");
    await form.getByLabel("Vector", { exact: true }).fill("[1, 0, 0]");
    await form.getByLabel("Rows").fill("3");
    await form.getByRole("button", { name: "Find nearest" }).click();
    await status("3 rows nearest to the pasted vector by embedding");
    expect(await shown()).toEqual([1, 2, 4]);
    // A pasted vector has no row of its own to leave out.
    expect(lists.at(-1)).toEqual({ table: "doc", nearest: { column: "embedding", vector: [1, 0, 0], k: 3 } });
    expect(await page.getByRole("alert").count()).toBe(0);
    await page.getByRole("button", { name: "Back to all rows" }).click();
    await status("Rows 1–25 of 59");
  });

  it("numbers a page whose rows were deleted meanwhile by the rows shown, and says so when none are left", async () => {
    // Doc 3 is gone: the second page is docs 27 to 51.
    await page.getByRole("button", { name: "Next page" }).click();
    await status("Rows 26–50 of 59");
    expect(await shown()).toEqual(range(27, 51));
    // Gone while the second page is shown: the next one, docs 52 to 60, is the last 9 of the 54 left.
    await running.app.db.deleteFrom("doc").where("id", "in", [40, 41, 42, 43, 44]).execute();
    await page.getByRole("button", { name: "Next page" }).click();
    await status("Rows 46–54 of 54");
    expect(await shown()).toEqual(range(52, 60));

    // Every other row of this page deleted elsewhere, then the last one from here: nothing is left of it.
    await running.app.db.deleteFrom("doc").where("id", ">=", 53).execute();
    await page.getByRole("checkbox", { name: "Select doc 52" }).check();
    await page.getByRole("button", { name: "Delete selected (1)" }).click();
    await page.getByRole("button", { name: "Confirm delete of 1 row" }).click();
    await status("This page is empty now (45 rows in all)");
    expect(await shown()).toEqual([]);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Back to the first page" }).click();
    await status("Rows 1–25 of 45");
    expect(await page.getByRole("button", { name: "Back to the first page" }).count()).toBe(0);
  });
});
