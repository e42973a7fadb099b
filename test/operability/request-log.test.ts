import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import pino from "pino";
import { App, RpcError } from "../../presets/trellis.js";
import { sqliteDialect } from "../../kernel/db/dialect/sqlite.js";
import { localLive } from "../../kernel/db/dialect/live-providers.js";
import { createBlog } from "../../examples/blog/app.js";
import { closeAfterEach, request, rpc } from "../support/app.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { fakeLogger } from "./fake-logger.js";

const build = closeAfterEach();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const sqlite = () => ({ dialect: sqliteDialect({ filename: ":memory:" }), kind: "sqlite" as const });

function greeter(options: Partial<ConstructorParameters<typeof App>[0]> = {}) {
  return new App({ db: sqlite(), ...options })
    .procedure("greet", (base) => base.input(z.object({ name: z.string().min(1) })).handler(({ input }) => `hello ${input.name}`))
    .procedure("boom", (base) => base.handler(() => {
      throw new Error("the disk is on fire");
    }))
    .procedure("refuse", (base) => base.handler(() => {
      throw new RpcError("CONFLICT", { message: "Taken" });
    }))
    .route("GET", "/crash", () => {
      throw new TypeError("route exploded");
    });
}

afterEach(() => vi.restoreAllMocks());

describe("request ids", () => {
  it("sends back the caller's X-Request-Id", async () => {
    const app = build(greeter({ logger: false }));
    const result = await rpc(app, "greet", { name: "Ada" }, { "x-request-id": "req-42" });
    expect(result.status).toBe(200);
    expect(result.headers.get("x-request-id")).toBe("req-42");
  });

  it("generates one when the caller sends none, or one that is not a plain token", async () => {
    const app = build(greeter({ logger: false }));
    const none = await request(app, "GET", "/health");
    expect(none.headers.get("x-request-id")).toMatch(UUID);
    const odd = await rpc(app, "greet", { name: "Ada" }, { "x-request-id": "has spaces, \"quotes\"" });
    expect(odd.headers.get("x-request-id")).toMatch(UUID);
    const other = await request(app, "GET", "/health");
    expect(other.headers.get("x-request-id")).not.toBe(none.headers.get("x-request-id"));
  });

  it("is on error answers too: 404, 400 and 500", async () => {
    const app = build(greeter({ logger: false, onError: () => {} }));
    for (const [path, status] of [["/nowhere", 404], ["/crash", 500]] as const) {
      const result = await request(app, "GET", path, { headers: { "x-request-id": `id-${status}` } });
      expect(result.status).toBe(status);
      expect(result.headers.get("x-request-id")).toBe(`id-${status}`);
    }
    const invalid = await rpc(app, "greet", {}, { "x-request-id": "id-400" });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-request-id")).toBe("id-400");
  });
});

describe("a line per request", () => {
  it("logs method, path, procedure, status, duration and request id", async () => {
    const logger = fakeLogger();
    const app = build(greeter({ logger }));
    await rpc(app, "greet", { name: "Ada" }, { "x-request-id": "req-1" });
    await request(app, "GET", "/health", { headers: { "x-request-id": "req-2" } });
    expect(logger.lines).toHaveLength(2);
    const [call, health] = logger.lines;
    expect(call).toMatchObject({
      level: "info",
      fields: { requestId: "req-1", method: "POST", path: "/rpc/greet", procedure: "greet", status: 200 },
    });
    expect(call!.fields.durationMs).toBeTypeOf("number");
    expect(call!.message).toMatch(/^POST \/rpc\/greet 200 [\d.]+ ms$/);
    expect(health!.fields).toMatchObject({ requestId: "req-2", method: "GET", path: "/health", status: 200 });
    expect(health!.fields).not.toHaveProperty("procedure");
    expect(health!.fields).not.toHaveProperty("userId");
  });

  it("carries the message of an error answer", async () => {
    const logger = fakeLogger();
    const app = build(greeter({ logger }));
    await rpc(app, "refuse");
    await request(app, "GET", "/nowhere");
    expect(logger.lines.map((line) => [line.fields.status, line.fields.error])).toEqual([
      [409, "Taken"],
      [404, "No route for GET /nowhere"],
    ]);
  });

  it("names the signed-in user", async () => {
    const logger = fakeLogger();
    const app = await createBlog({ dialect: sqliteDialect({ filename: ":memory:" }), kind: "sqlite", live: localLive() }, { baseUrl: ORIGIN, logger }).start();
    try {
      const user = await signUp(app, "ada@example.com");
      logger.lines.length = 0;
      const me = await rpc(app, "me", undefined, { cookie: user.cookie, origin: ORIGIN });
      expect(me.status).toBe(200);
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]!.fields).toMatchObject({ procedure: "me", status: 200, userId: user.userId });
      await rpc(app, "post.list", {});
      expect(logger.lines[1]!.fields).not.toHaveProperty("userId");
    } finally {
      await app.close();
    }
  });

  it("is off by default under the test runner", async () => {
    const write = vi.spyOn(process.stdout, "write");
    const app = build(greeter());
    await request(app, "GET", "/health");
    expect(write).not.toHaveBeenCalled();
    expect(app.sealed.logger).toBeUndefined();
  });

  it("takes pino as it is, one JSON line per request", async () => {
    const written: string[] = [];
    const logger = pino({ base: undefined }, { write: (line: string) => void written.push(line) });
    const app = build(greeter({ logger }));
    await rpc(app, "greet", { name: "Ada" }, { "x-request-id": "pino-1" });
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0]!)).toMatchObject({ level: 30, requestId: "pino-1", procedure: "greet", status: 200, msg: expect.stringMatching(/^POST \/rpc\/greet 200/) });
  });
});

describe("unexpected failures", () => {
  it("are logged with the request id, the procedure and the cause's stack", async () => {
    const logger = fakeLogger();
    const app = build(greeter({ logger }));
    const result = await rpc(app, "boom", undefined, { "x-request-id": "req-500" });
    expect(result.status).toBe(500);
    expect(result.body.message).toBe("Internal server error");
    const failure = logger.lines.find((line) => line.fields.err);
    expect(failure).toMatchObject({
      level: "error",
      message: "Unexpected rpc failure in boom",
      fields: { source: "rpc", requestId: "req-500", procedure: "boom", method: "POST", path: "/rpc/boom" },
    });
    expect(failure!.fields.err.stack).toContain("the disk is on fire");
    const line = logger.lines.find((entry) => entry.fields.status === 500);
    expect(line).toMatchObject({ level: "error", fields: { requestId: "req-500", procedure: "boom" } });
  });

  it("reach onError with the same request facts (a route: its path)", async () => {
    const onError = vi.fn();
    const app = build(greeter({ logger: false, onError }));
    await rpc(app, "boom", undefined, { "x-request-id": "req-a" });
    await request(app, "GET", "/crash", { headers: { "x-request-id": "req-b" } });
    expect(onError).toHaveBeenCalledTimes(2);
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(Error);
    expect(onError.mock.calls[0]![1]).toEqual({ source: "rpc", requestId: "req-a", method: "POST", path: "/rpc/boom", procedure: "boom" });
    expect(onError.mock.calls[1]![1]).toEqual({ source: "route", requestId: "req-b", method: "GET", path: "/crash", procedure: undefined });
  });

  it("without a logger go to the console, readable, with the request id and stack", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const app = build(greeter({ logger: false }));
    await rpc(app, "boom", undefined, { "x-request-id": "req-c" });
    expect(printed).toHaveBeenCalledTimes(1);
    const text = String(printed.mock.calls[0]![0]);
    expect(text).toContain("Unexpected rpc failure in boom (request req-c)");
    expect(text).toMatch(/Error: the disk is on fire\n\s+at /);
  });
});
