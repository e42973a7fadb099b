import { rmSync } from "node:fs";
import type { Page } from "playwright-core";
import type { DatabaseConfig } from "../../kernel/index.js";
import { serve, type RunningServer } from "../../presets/node.js";
import type { Servable } from "../../presets/serving.js";
import { signUp, type SignedIn } from "./auth.js";
import { freePort, launchChromium, screenshotPath, type LaunchedChromium } from "./browser.js";
import { openDatabase, type TestDatabase } from "./databases.js";

export const PASSWORD = "correct-horse-battery-staple";
/** The administrator the dashboard suites sign in as (`signUpAdmin`). */
export const BOSS = "boss@example.test";

export interface ServedDashboard {
  running: RunningServer;
  /** The app's address, also its `baseUrl`: `http://127.0.0.1:<port>` (or `localhost`, as asked). */
  url: string;
  /** A fresh page of the suite's Chromium. */
  page: Page;
}

export interface DashboardSuite extends LaunchedChromium {
  /**
   * Serves the app `build` makes for this address and database on a free loopback port and opens a
   * page; call it in the suite's `beforeAll`. The database: a fresh SQLite one (the default), the
   * file's PGlite, or the embedded database in memory (the app closes it).
   */
  serve(build: (url: string, db: DatabaseConfig) => Servable, options?: { database?: "sqlite" | "pglite" | "embedded"; host?: "127.0.0.1" | "localhost" }): Promise<ServedDashboard>;
  /** Signs in through the dashboard's form on the page `serve` opened, at `path` (`/_admin#/files`). */
  signIn(path?: string, email?: string): Promise<void>;
  /** Where a screenshot goes (`screenshotPath`): docs/ with `UPDATE_SCREENSHOT`, else the profile. */
  shot(name: string): string;
  /** Closes its Chromium context, its folder, the served app and its database; the suite's `afterAll`. */
  close(): Promise<void>;
}

/**
 * A dashboard suite in Chromium: the browser launched now, at the file's top (the suite skips when
 * `unavailable` is set; `launchChromium` has printed why, naming `suite`), the app served later.
 */
export async function dashboardSuite(prefix: string, suite: string): Promise<DashboardSuite> {
  const chromium = await launchChromium(prefix, suite);
  let served: ServedDashboard | undefined;
  let running: RunningServer | undefined;
  let db: TestDatabase | undefined;
  return {
    ...chromium,
    async serve(build, { database = "sqlite", host = "127.0.0.1" } = {}) {
      let config: DatabaseConfig;
      if (database === "embedded") config = (await import("../../kernel/embedded/index.js")).embedded({ dataDir: "memory://" });
      else {
        db = await openDatabase(database);
        config = { dialect: db.dialect, kind: db.kind };
      }
      const port = await freePort();
      const url = `http://${host}:${port}`;
      running = await serve(build(url, config), { port, hostname: "127.0.0.1", handleSignals: false });
      served = { running, url, page: await chromium.context!.newPage() };
      return served;
    },
    async signIn(path = "/_admin", email = BOSS) {
      const { page, url } = served!;
      await page.goto(`${url}${path}`);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
    },
    shot: (name) => screenshotPath(chromium.profile, name),
    async close() {
      await chromium.context?.close();
      rmSync(chromium.profile, { recursive: true, force: true });
      await running?.close();
      await db?.close();
    },
  };
}

/** Signs `email` up through the front door and gives them the admin role, as the dashboard needs. */
export async function signUpAdmin(app: RunningServer["app"], email = BOSS): Promise<SignedIn> {
  const admin = await signUp(app, email, PASSWORD);
  await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  return admin;
}
