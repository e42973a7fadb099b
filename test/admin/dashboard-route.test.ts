import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { request, sqliteMemory } from "../support/app.js";
import { adminApp } from "./fixture.js";

describe("the dashboard's page and assets", () => {
  let app: Awaited<ReturnType<ReturnType<typeof adminApp>["start"]>>;
  beforeAll(async () => {
    app = await adminApp(sqliteMemory()).start();
  });
  afterAll(() => app?.close());

  it("serves the page with a strict CSP, no inline script, and hashed assets under the path", async () => {
    const page = await request(app, "GET", "/_admin");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const html = String(page.body);
    // The only script is the external, hashed bundle: nothing inline, nothing from another origin.
    expect(html.match(/<script[^>]*>/g)).toEqual([expect.stringMatching(/^<script type="module" src="\/_admin\/assets\/app-[0-9a-f]{10}\.js">$/)]);
    expect(html).not.toMatch(/https?:\/\//);
    const script = /src="([^"]+)"/.exec(html)![1]!;
    const style = /href="([^"]+\.css)"/.exec(html)![1]!;
    const js = await app.handle(new Request(`http://localhost${script}`));
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toContain("immutable");
    const css = await app.handle(new Request(`http://localhost${style}`));
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const gzipped = gzipSync(new Uint8Array(await js.arrayBuffer())).byteLength + gzipSync(new Uint8Array(await css.arrayBuffer())).byteLength;
    console.log(`admin dashboard assets: ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    expect(gzipped).toBeLessThan(150 * 1024);
    expect((await request(app, "GET", "/_admin/assets/app-0000000000.js")).status).toBe(404);
  });

  it("ui: false drops the page but keeps the API; path moves it", async () => {
    const off = await adminApp(sqliteMemory(), { ui: false }).start();
    const moved = await adminApp(sqliteMemory(), { path: "/console/" }).start();
    try {
      expect((await request(off, "GET", "/_admin")).status).toBe(404);
      expect((await request(off, "POST", "/rpc/_admin/meta", { headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(401);
      expect((await request(moved, "GET", "/console")).status).toBe(200);
      expect(String((await request(moved, "GET", "/console")).body)).toContain('src="/console/assets/');
      expect((await request(moved, "GET", "/_admin")).status).toBe(404);
    } finally {
      await off.close();
      await moved.close();
    }
  });
});
