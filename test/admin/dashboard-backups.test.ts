/**
 * The dashboard's backups view in Chromium (as in dashboard-mail.test.ts): the settings and kept
 * backups, "Back up now", a download; and the same API refused to a signed-in user without the
 * admin role. The same app has channels, for the channels view. Skips, saying why, without a browser.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Page } from "playwright-core";
import type { RunningServer } from "../../presets/node.js";
import { App } from "../../presets/trellis.js";
import { schema } from "../../kernel/schema/index.js";
import { signUp } from "../support/auth.js";
import { openSocket } from "../support/channel-socket.js";
import { dashboardSuite, PASSWORD, signUpAdmin } from "../support/dashboard.js";

const dashboard = await dashboardSuite("trellis-admin-backups-chromium-", "the dashboard backups suite");
const { profile } = dashboard;

const v1 = schema("1").auth().table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's backups view in Chromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "trellis-dashboard-backups-"));
  let running: RunningServer;
  let page: Page;
  let url: string;
  let alice: string;

  const call = (name: string, cookie?: string) =>
    running.app.handle(new Request(`${url}/rpc/_admin/backups/${name}`, { method: "POST", headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) }, body: "{}" }));

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve(
      (url, db) =>
        new App({ baseUrl: url, db, onError: () => undefined })
          .schema(v1)
          .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
          .admin()
          .backups({ to: dir, keep: 3, every: "0 3 * * *" })
          .channels({ "room:{id}": { join: "public", events: { hello: z.object({ name: z.string() }) } } }),
      { database: "embedded" },
    ));
    await signUpAdmin(running.app);
    alice = (await signUp(running.app, "alice@example.test", PASSWORD)).cookie;
  }, 60_000);

  afterAll(async () => {
    await dashboard.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses the API signed out (401) and to a user without the admin role (403)", async () => {
    for (const name of ["list", "take", "download"]) {
      expect((await call(name)).status).toBe(401);
      expect((await call(name, alice)).status).toBe(403);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it("shows where backups go, takes one now and lists it", { timeout: 120_000 }, async () => {
    await dashboard.signIn();
    await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: "Backups" }).click();
    await page.getByText("No backups yet.").waitFor();
    const settings = page.getByRole("definition");
    expect(await settings.filter({ hasText: dir }).count()).toBe(1);
    expect(await settings.filter({ hasText: "0 3 * * * (UTC), by this process" }).count()).toBe(1);
    await page.getByRole("button", { name: "Back up now" }).click();
    const status = page.getByRole("status").filter({ hasText: /^Backup backup-.*\.tar\.gz taken \(\d+\.\d MB\)$/ });
    await status.waitFor({ timeout: 60_000 });
    const table = page.getByRole("table", { name: "Kept backups" });
    await table.waitFor();
    const [name] = readdirSync(dir);
    expect(await table.getByRole("row").filter({ hasText: name! }).count()).toBe(1);
  });

  it("downloads a backup as the file that was kept", { timeout: 60_000 }, async () => {
    const [name] = readdirSync(dir);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: `Download ${name}` }).click()]);
    expect(download.suggestedFilename()).toBe(name);
    const saved = join(profile, "downloaded.tar.gz");
    await download.saveAs(saved);
    expect(statSync(saved).size).toBe(statSync(join(dir, name!)).size);
  });

  it("shows the channels with their members, connections and messages", { timeout: 60_000 }, async () => {
    const first = await openSocket(url);
    const second = await openSocket(url);
    try {
      first.send({ type: "join", channel: "room:1" });
      second.send({ type: "join", channel: "room:1" });
      await first.next((frame) => frame.type === "joined");
      await second.next((frame) => frame.type === "joined");
      running.app.sealed.service("channels")!.publish("room:1" as never, "hello" as never, { name: "una" } as never);
      await first.next((frame) => frame.type === "message");
      await page.goto(`${url}/_admin#/`);
      await page.getByRole("navigation", { name: "Tables" }).getByRole("link", { name: "Channels" }).click();
      const row = page.getByRole("table", { name: "Channels with members" }).getByRole("row").filter({ hasText: "room:1" });
      await row.waitFor();
      expect(await row.getByRole("cell").allTextContents()).toEqual(["room:1", "2", "0"]);
      const totals = page.getByRole("definition");
      expect(await totals.allTextContents()).toEqual(["2", "none (one process)", expect.stringMatching(/^1( \(\d+\/s\))?$/), expect.stringMatching(/^2( \(\d+\/s\))?$/)]);
      // The second answer, two seconds on, gives the rates.
      await totals.filter({ hasText: "(0/s)" }).first().waitFor({ timeout: 10_000 });
    } finally {
      first.close();
      second.close();
    }
  });
});
