/**
 * The dashboard's jobs view in Chromium (playwright-core), on an app served on a real port with the
 * embedded database: queues with their counts, a failed job with its error, retried by hand.
 * Skips, saying why, when no browser can be started.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { RunningServer } from "../../presets/node.js";
import { waitFor } from "./support.js";
import { pressTabUntil } from "../support/browser.js";
import { dashboardSuite, signUpAdmin } from "../support/dashboard.js";

const dashboard = await dashboardSuite("trellis-jobs-chromium-", "the jobs dashboard suite");

describe.skipIf(dashboard.unavailable !== undefined)("the jobs view of the admin dashboard", () => {
  let running: RunningServer;
  let page: Page;
  let attempts = 0;

  beforeAll(async () => {
    ({ running, page } = await dashboard.serve(
      (url, db) =>
        new App({ baseUrl: url, db, onError: () => undefined })
          .schema(schema("1").auth().build())
          .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
          .admin()
          .jobs({ pollingInterval: 0.5 })
          .job("invoice.send", { retry: 0 }, () => {
            if (++attempts === 1) throw new Error("the mail server refused");
          })
          .cron("cleanup", "0 3 * * *", () => undefined),
      { database: "embedded" },
    ));
    await signUpAdmin(running.app);
    const jobs = running.app.sealed.service("jobs")!;
    const id = await jobs.send("invoice.send", { invoice: 7 });
    await waitFor("the failure", async () => (await jobs.get("invoice.send", id!))?.state === "failed");
  }, 90_000);

  afterAll(() => dashboard.close());

  it("lists queues and the failed job with its error, and retries it", async () => {
    await dashboard.signIn("/_admin#/jobs");
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    // The view's heading paints before its data arrives: wait for the rows themselves.
    await page.getByRole("cell", { name: "0 3 * * *" }).waitFor();
    await page.getByRole("cell", { name: "the mail server refused" }).waitFor();
    await page.screenshot({ path: dashboard.shot("admin-jobs.png") });
    // By keyboard: Tab to the button, Enter retries.
    await pressTabUntil(page, page.getByRole("button", { name: /^Retry job / }));
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "will run again" }).waitFor();
    await waitFor("the second attempt", () => attempts === 2);
  }, 60_000);
});
