/**
 * The dashboard's files view with image variants, in Chromium: the preview is a variant, a file's
 * Details panel lists its variants and copies a signed URL that works without a session. Skips,
 * saying why, without a browser.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { memorySecrets } from "../../kernel/secrets/index.js";
import { App } from "../../presets/trellis.js";
import type { RunningServer } from "../../presets/node.js";
import { dashboardSuite, signUpAdmin } from "../support/dashboard.js";

const v1 = schema("1").auth().files().build();
const dashboard = await dashboardSuite("trellis-admin-variants-chromium-", "the dashboard variants suite");

describe.skipIf(dashboard.unavailable !== undefined)("the dashboard's file previews and signed URLs, in Chromium", { timeout: 120_000 }, () => {
  let running: RunningServer;
  let page: Page;
  let url: string;

  beforeAll(async () => {
    ({ running, page, url } = await dashboard.serve((url, db) =>
      new App({ name: "Variants", baseUrl: url, db, storage: memoryStorage(), secrets: memorySecrets({ FILES_SIGNING_KEY: "dashboard-signing-key-0123456789-abcdef" }) })
        .schema(v1)
        .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
        .admin()
        .files({ images: { variants: { thumb: { width: 48, height: 48, fit: "cover" }, card: { width: 300 } } } }),
    ));
    await signUpAdmin(running.app);
    page.setDefaultTimeout(30_000);
  }, 60_000);

  afterAll(() => dashboard.close());

  it("previews through the thumb variant, lists the variants and copies a signed URL that works signed out", async () => {
    const jpeg = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 30, g: 120, b: 200 } } }).jpeg().toBuffer();
    await dashboard.signIn("/_admin#/files");
    await page.getByRole("heading", { name: "Files", level: 1 }).waitFor();
    await page.getByLabel("File", { exact: true }).setInputFiles({ name: "sky.jpg", mimeType: "image/jpeg", buffer: jpeg });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.getByRole("status").filter({ hasText: "Uploaded sky.jpg" }).waitFor();

    const row = page.getByRole("table", { name: "files" }).getByRole("row").filter({ hasText: "sky.jpg" }).first();
    const preview = row.getByRole("img", { name: "Preview of sky.jpg" });
    expect(await preview.getAttribute("src")).toMatch(/\/_admin\/files\/[^?]+\?variant=thumb$/);
    // The thumb variant, 48 x 48, not the 640 x 480 original.
    await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(48);

    await row.getByRole("button", { name: "Details of sky.jpg" }).click();
    const panel = page.getByRole("region", { name: "Details of sky.jpg" });
    expect(await panel.getByRole("list", { name: "Variants" }).getByRole("link").allTextContents()).toEqual(["thumb", "card"]);
    await panel.getByLabel("Version").selectOption("card");
    await panel.getByRole("button", { name: "Copy signed URL" }).click();
    const signed = await panel.getByRole("status").getByLabel("Signed URL").textContent();
    expect(signed).toMatch(new RegExp(`^${url}/files/[^?]+\\?variant=card&expires=\\d+&sig=`));
    const response = await fetch(signed!, { headers: { accept: "image/webp" } });
    expect([response.status, response.headers.get("content-type")]).toEqual([200, "image/webp"]);
    expect((await sharp(new Uint8Array(await response.arrayBuffer())).metadata()).width).toBe(300);
  });
});
