import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { chromium } from "playwright-core";
import { createBlog } from "../../examples/blog/app.js";
import { serve } from "../../presets/node.js";
import { assetSizes, buildDashboard } from "../../plugins/admin/assets.js";
import { embedded } from "../../kernel/embedded/index.js";
import { signUp } from "../support/auth.js";

const PASSWORD = "correct-horse-battery-staple";
const ROUNDS = 7;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The dashboard on the blog with 10,000 posts (PGlite in memory, served on a real port, Debian's
 * headless Chromium): the time from navigating to `/_admin#/table/post` to the first row of the
 * table painted, signed in, the bundle cached (a returning admin). Also the bundle's size.
 */
export async function run(): Promise<void> {
  const assets = await buildDashboard();
  const { bytes, gzip } = assetSizes(assets);
  console.log(`\n## dashboard\n\nbundle: ${(bytes / 1024).toFixed(1)} KB, ${(gzip / 1024).toFixed(1)} KB gzipped (budget 150 KB gzipped)`);

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = await serve(createBlog(embedded({ dataDir: "memory://" }), { baseUrl: url }), { port, hostname: "127.0.0.1", handleSignals: false });
  const profile = mkdtempSync(join(tmpdir(), "trellis-dashboard-bench-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    viewport: { width: 1280, height: 800 },
  });
  try {
    const app = running.app;
    const admin = await signUp(app, "bench-admin@example.test", PASSWORD);
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    await sql`insert into post (title, body, "authorId") select 'post ' || i, repeat('text ', 20), ${admin.userId} from generate_series(1, 10000) as i`.execute(app.db);

    const page = await context.newPage();
    await page.goto(`${url}/_admin`);
    await page.getByLabel("Email").fill("bench-admin@example.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Tables" }).waitFor();

    const wall: number[] = [];
    const inPage: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto("about:blank");
      const started = performance.now();
      await page.goto(`${url}/_admin#/table/post`);
      await page.getByRole("table", { name: "post rows" }).locator("tbody tr").first().waitFor();
      // The page's own clock: milliseconds since its navigation started, once the row is there and painted.
      inPage.push(await page.evaluate(() => new Promise<number>((resolve) => requestAnimationFrame(() => resolve(performance.now())))));
      wall.push(performance.now() - started);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const status = await page.getByRole("status").textContent();
    console.log(`blog with 10,000 posts (${status}): navigation to the first table row painted, ${ROUNDS} rounds`);
    console.log(`  in-page (performance.now at the first frame with rows): median ${median(inPage).toFixed(0)} ms, best ${Math.min(...inPage).toFixed(0)} ms`);
    console.log(`  wall clock from page.goto: median ${median(wall).toFixed(0)} ms, best ${Math.min(...wall).toFixed(0)} ms`);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    await running.close();
  }
}
