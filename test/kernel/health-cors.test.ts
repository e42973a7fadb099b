import { describe, expect, it, vi } from "vitest";
import { App } from "../../presets/trellis.js";
import { errorOf, request, rpc, sqliteMemory, closeAfterEach } from "../support/app.js";

const build = closeAfterEach();

describe("health", () => {
  it("answers 200 ok/up by default", async () => {
    const app = build(new App({ db: sqliteMemory() }));
    expect(await request(app, "GET", "/health")).toMatchObject({ status: 200, body: { status: "ok", database: "up" } });
  });

  it("is omitted with health: false and moves with a custom path", async () => {
    expect((await request(build(new App({ db: sqliteMemory(), health: false })), "GET", "/health")).status).toBe(404);
    const moved = build(new App({ db: sqliteMemory(), health: { path: "/_status" } }));
    expect((await request(moved, "GET", "/_status")).status).toBe(200);
    expect((await request(moved, "GET", "/health")).status).toBe(404);
  });

  it("loses to a .route() on the same path", async () => {
    const app = build(new App({ db: sqliteMemory() }).route("GET", "/health", () => ({ custom: true })));
    expect((await request(app, "GET", "/health")).body).toEqual({ custom: true });
  });

  it("answers 503 when the database probe fails, and reports it", async () => {
    const onError = vi.fn();
    const app = build(new App({ db: sqliteMemory(), onError }));
    await request(app, "GET", "/health");
    await app.db.destroy();
    expect(await request(app, "GET", "/health")).toMatchObject({ status: 503, body: { status: "error", database: "down" } });
    expect(onError).toHaveBeenCalledWith(expect.any(Error), { source: "route" });
  });
});

describe("cors", () => {
  const origin = "https://app.example.com";

  it("sets no header without a cors config", async () => {
    const app = build(new App({ db: sqliteMemory() }).procedure("p", (b) => b.handler(() => 1)));
    const result = await rpc(app, "p", undefined, { origin });
    expect(result.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("allows only exact origins, on RPC, raw routes and errors", async () => {
    const app = build(
      new App({ db: sqliteMemory(), cors: { origins: [origin] } })
        .procedure("p", (b) => b.handler(() => 1))
        .route("GET", "/raw", () => "ok"),
    );
    expect((await rpc(app, "p", undefined, { origin })).headers.get("access-control-allow-origin")).toBe(origin);
    expect((await rpc(app, "p", undefined, { origin: `${origin}.evil.com` })).headers.get("access-control-allow-origin")).toBeNull();
    expect((await request(app, "GET", "/raw", { headers: { origin } })).headers.get("access-control-allow-origin")).toBe(origin);
    const missing = await request(app, "GET", "/missing", { headers: { origin } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(origin);
    expect(missing.headers.get("vary")).toContain("Origin");
  });

  it("echoes any origin with ['*'] and answers preflights with 204", async () => {
    const app = build(new App({ db: sqliteMemory(), cors: { origins: ["*"] } }).procedure("p", (b) => b.handler(() => 1)));
    const preflight = await request(app, "OPTIONS", "/rpc/p", {
      headers: { origin: "https://x.test", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://x.test");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("sends credentials when asked, and refuses credentials with a wildcard at build", async () => {
    const app = build(new App({ db: sqliteMemory(), cors: { origins: [origin], credentials: true } }).procedure("p", (b) => b.handler(() => 1)));
    expect((await rpc(app, "p", undefined, { origin })).headers.get("access-control-allow-credentials")).toBe("true");
    const wild = new App({ db: sqliteMemory(), cors: { origins: ["*"], credentials: true } });
    expect(errorOf(() => wild.build())).toMatchObject({ code: "CORS_WILDCARD_CREDENTIALS", plugin: "cors", message: expect.stringMatching(/wildcard origin/) });
  });
});
