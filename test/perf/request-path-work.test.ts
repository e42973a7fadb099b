/**
 * The request path guarded by counting work, not time: under `serve()` a raw route that answers at
 * once is answered with no promise (the Node adapter then writes it at once, without its own
 * promise and close listener), and middleware with nothing to do for a request is never called.
 * A change that puts a promise, an async frame or a do-nothing middleware back on that path fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESPOND, definePlugin, type HttpMiddleware, type Respond } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const PONG = JSON.stringify({ pong: true });

describe("work on a raw route's request path", () => {
  const calls = { passing: 0, acting: 0, asked: 0 };
  let built: any;
  let respond: Respond;
  const headers: Record<string, string> = {};
  const facts = () => ({ clientAddress: "127.0.0.1", requestId: null, response: { setHeader: (name: string, value: string) => (headers[name] = value) } });

  beforeAll(async () => {
    // Acts only on /acted: every other request must not reach it.
    const acting: HttpMiddleware = (event, next) => (calls.acting++, next().then((response) => (response.headers.set("x-acted", "yes"), response)));
    acting.passes = (event) => (calls.asked++, event.path !== "/acted");
    const passing: HttpMiddleware = (_event, next) => (calls.passing++, next());
    passing.passes = () => true;
    const plugin = definePlugin({ name: "counted", build: () => ({ middleware: [passing, acting] }) });
    built = await new App({ db: sqliteMemory() })
      .use(plugin)
      .route("GET", "/ping", () => new Response(PONG, { headers: { "content-type": "application/json" } }))
      .route("GET", "/acted", () => new Response(PONG, { headers: { "content-type": "application/json" } }))
      .start();
    respond = built[RESPOND];
  });
  afterAll(() => built.close());

  it("answers a raw route with the Response itself, not a promise, with the default plugins on", async () => {
    // The first request of a started app settles its availability; the ones after it are the steady state.
    await built.handle(new Request("http://localhost/ping"));
    const before = { ...calls };
    const answer = respond(new Request("http://localhost/ping"), facts());
    expect(answer).toBeInstanceOf(Response);
    expect((answer as Response).status).toBe(200);
    expect(await (answer as Response).text()).toBe(PONG);
    expect(headers["x-request-id"]).toMatch(/^[\w-]{36}$/);
    // Asked, not called: no closure and no promise on their account.
    expect(calls).toEqual({ passing: before.passing, acting: before.acting, asked: before.asked + 1 });
  });

  it("calls a middleware once where it acts, and answers with a promise then", async () => {
    const before = { ...calls };
    const answer = respond(new Request("http://localhost/acted"), facts());
    expect(answer).toBeInstanceOf(Promise);
    const response = await answer;
    expect(response.status).toBe(200);
    expect(response.headers.get("x-acted")).toBe("yes");
    expect(calls).toEqual({ passing: before.passing, acting: before.acting + 1, asked: before.asked + 1 });
  });

  it("still answers handle() with a promise, whatever the route", async () => {
    const answer = built.handle(new Request("http://localhost/ping"));
    expect(answer).toBeInstanceOf(Promise);
    expect((await answer).status).toBe(200);
  });
});

describe("work on a raw route's request path with /metrics on", () => {
  const TOKEN = "metrics-token-0123456789";
  let built: any;
  beforeAll(async () => {
    built = await new App({ db: sqliteMemory(), telemetry: { metrics: { token: TOKEN } } })
      .route("GET", "/ping", () => new Response(PONG, { headers: { "content-type": "application/json" } }))
      .start();
  });
  afterAll(() => built.close());

  it("counts the request and still answers it at once", async () => {
    await built.handle(new Request("http://localhost/ping"));
    const answer = built[RESPOND](new Request("http://localhost/ping"), { clientAddress: "127.0.0.1", requestId: null, response: { setHeader: () => undefined } });
    expect(answer).toBeInstanceOf(Response);
    expect((answer as Response).status).toBe(200);
    const scraped = await built.handle(new Request("http://localhost/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }));
    expect(scraped.status).toBe(200);
    const line = (await scraped.text()).split("\n").find((text: string) => text.startsWith("trellis_http_requests_total{") && text.includes('route="/ping"'));
    expect(line).toMatch(/ 2$/);
  });
});
