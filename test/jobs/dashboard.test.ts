/**
 * The dashboard's jobs view in Chromium (playwright-core), on an app served on a real port with the
 * embedded database: queues with their counts, a failed job with its error, retried by hand.
 * Skips, saying why, when no browser can be started.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { embedded } from "../../kernel/embedded/index.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { signUp } from "../support/auth.js";
import { waitFor } from "./support.js";
import { freePort, launchChromium, pressTabUntil, screenshotPath } from "../support/browser.js";

const PASSWORD = "correct-horse-battery-staple";
const { profile, context, unavailable } = await launchChromium("trellis-jobs-chromium-", "the jobs dashboard suite");


describe.skipIf(unavailable !== undefined)("the jobs view of the admin dashboard", () => {
  let running: RunningServer;
  let url: string;
  let attempts = 0;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const app = new App({ baseUrl: url, db: embedded({ dataDir: "memory://" }), onError: () => undefined })
      .schema(schema("1").auth().build())
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .admin()
      .jobs({ pollingInterval: 0.5 })
      .job("invoice.send", { retry: 0 }, () => {
        if (++attempts === 1) throw new Error("the mail server refused");
      })
      .cron("cleanup", "0 3 * * *", () => undefined);
    running = await serve(app, { port, hostname: "127.0.0.1", handleSignals: false });
    const boss = await signUp(running.app, "boss@example.test", PASSWORD);
    await running.app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
    const jobs = running.app.sealed.service("jobs")!;
    const id = await jobs.send("invoice.send", { invoice: 7 });
    await waitFor("the failure", async () => (await jobs.get("invoice.send", id!))?.state === "failed");
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    await running?.close();
  });

  it("lists queues and the failed job with its error, and retries it", async () => {
    const page = await context!.newPage();
    await page.goto(`${url}/_admin#/jobs`);
    await page.getByLabel("Email").fill("boss@example.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    // The view's heading paints before its data arrives: wait for the rows themselves.
    await page.getByRole("cell", { name: "0 3 * * *" }).waitFor();
    await page.getByRole("cell", { name: "the mail server refused" }).waitFor();
    await page.screenshot({ path: screenshotPath(profile, "admin-jobs.png") });
    // By keyboard: Tab to the button, Enter retries.
    await pressTabUntil(page, page.getByRole("button", { name: /^Retry job / }));
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "will run again" }).waitFor();
    await waitFor("the second attempt", () => attempts === 2);
  }, 60_000);
});
