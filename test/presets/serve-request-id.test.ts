import { afterAll, beforeAll, expect, it } from "vitest";
import { definePlugin } from "../../kernel/index.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

// serve() hands the kernel the caller's X-Request-Id from Node's parsed headers and writes the
// answer's on Node's response: the id must read exactly as through handle().
let server: RunningServer;
beforeAll(async () => {
  const tagger = definePlugin({
    name: "tagger",
    build: () => ({ middleware: [(event, next) => (event.path === "/tagged" && event.setHeader("x-tag", "yes"), next())] }),
  });
  const app = new App({ db: sqliteMemory(), onError: () => {} })
    .use(tagger)
    .route("GET", "/ping", () => new Response(JSON.stringify({ pong: true }), { headers: { "content-type": "application/json" } }))
    .route("GET", "/tagged", () => ({ ok: true }));
  server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
});
afterAll(() => server?.close());

it("answers with the caller's sane X-Request-Id, over a real socket", async () => {
  const response = await fetch(`${server.url}/ping`, { headers: { "x-request-id": "req-42" } });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-request-id")).toBe("req-42");
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(await response.json()).toEqual({ pong: true });
});

it("generates a UUID when the caller sent none or an unsafe one", async () => {
  const none = await fetch(`${server.url}/ping`);
  expect(none.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  const unsafe = await fetch(`${server.url}/ping`, { headers: { "x-request-id": "a b\"c" } });
  expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
});

it("keeps middleware headers beside the id, and the id on 404s", async () => {
  const tagged = await fetch(`${server.url}/tagged`, { headers: { "x-request-id": "t-1" } });
  expect([tagged.headers.get("x-tag"), tagged.headers.get("x-request-id")]).toEqual(["yes", "t-1"]);
  const missing = await fetch(`${server.url}/nowhere`, { headers: { "x-request-id": "m-1" } });
  expect(missing.status).toBe(404);
  expect(missing.headers.get("x-request-id")).toBe("m-1");
});
