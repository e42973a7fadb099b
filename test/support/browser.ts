import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";

/** Debian's Chromium, as the dashboard suites and the dashboard bench drive it through playwright-core. */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync"];

/** A free port, so an app's baseUrl (which the auth library checks origins against) is known before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Where a view's screenshot goes: `docs/<name>` when `UPDATE_SCREENSHOT` is set (the images in
 * docs/admin.md are taken by the suites, never by hand), else the throwaway profile, so a plain run
 * leaves the tree clean.
 */
export function screenshotPath(profile: string, name: string): string {
  return process.env.UPDATE_SCREENSHOT ? new URL(`../../docs/${name}`, import.meta.url).pathname : join(profile, name);
}

/**
 * Presses Tab until `target` has the focus, as a keyboard user would, and throws when it never
 * does within `max` presses or when it has no visible focus ring (an outline) once there.
 */
export async function pressTabUntil(page: Page, target: Locator, max = 80): Promise<void> {
  // Resolved once: asking a handle is one round trip per key, a locator several.
  const element = await target.elementHandle();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const state = await element!.evaluate((el) => {
      if (el !== document.activeElement) return undefined;
      const style = getComputedStyle(el);
      return { ring: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0, name: el.getAttribute("aria-label") ?? el.textContent };
    });
    if (state && !state.ring) throw new Error(`No visible focus ring on "${state.name}"`);
    if (state) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

export interface LaunchedChromium {
  /** A throwaway folder: screenshots not meant for docs/ go here. */
  profile: string;
  context: BrowserContext | undefined;
  /** Why Chromium could not start (the suite then skips, saying so), or undefined. */
  unavailable: string | undefined;
}

/**
 * One Chromium per test process: the files a shared worker runs one after another each get a context
 * of their own in it (cookies, storage and pages apart, as a new profile's), rather than starting
 * the browser again (about a second of CPU each). Playwright closes it when the process exits.
 */
let browser: Promise<Browser> | undefined;
const sharedBrowser = () => (browser ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }));

/** A fresh Chromium context at 1280x800 and a throwaway folder, or the reason Chromium could not start, printed once for `suite`. */
export async function launchChromium(prefix: string, suite: string): Promise<LaunchedChromium> {
  const profile = mkdtempSync(join(tmpdir(), prefix));
  try {
    const context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 800 } });
    return { profile, context, unavailable: undefined };
  } catch (error) {
    const unavailable = (error as Error).message.split("\n")[0];
    console.log(`skipping ${suite}: Chromium could not be started (${CHROMIUM}): ${unavailable}`);
    return { profile, context: undefined, unavailable };
  }
}
