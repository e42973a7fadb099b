import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { definePlugin } from "../../kernel/index.js";
import { App, memoryRateLimitStore, type RateLimitConfig } from "../../presets/trellis.js";
import { closeAfterEach, errorOf, request, rpc, sqliteMemory } from "../support/app.js";

const build = closeAfterEach();

/** A session provider: a credential `x-api-key: <name>` is the user `<name>`. */
const sessions = definePlugin({
  name: "sessions",
  stage: "identity",
  provides: ["session"],
  build(ctx) {
    ctx.hooks.session.tap(async (event) => {
      const name = event.headers.get("x-api-key");
      return name ? { user: { id: name, email: `${name}@x`, name }, session: { id: "s", userId: name, expiresAt: new Date(8.64e15) } } : undefined;
    });
  },
});

function limitedApp(rateLimit: RateLimitConfig, extra: Partial<ConstructorParameters<typeof App>[0]> = {}) {
  return new App({ db: sqliteMemory(), rateLimit, onError: () => {}, ...extra })
    .use(sessions)
    .procedure("ping", (base) => base.handler(() => "pong"))
    .procedure("echo", (base) => base.input(z.object({ n: z.number() })).handler(({ input }) => input.n))
    .route("GET", "/rpcx", () => ({ ok: true }))
    .route("GET", "/plain", () => ({ ok: true }));
}

const from = (clientAddress: string) => ({ clientAddress });
const call = (app: { handle: (r: Request, f?: any) => Promise<Response> }, address = "203.0.113.1", headers: Record<string, string> = {}) =>
  app.handle(new Request("http://localhost/rpc/ping", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" }), from(address));

describe("rate limit", () => {
  it("is off by default: no counting, no headers", async () => {
    const built = build(new App({ db: sqliteMemory() }).procedure("ping", (base) => base.handler(() => "pong")));
    for (let i = 0; i < 5; i++) {
      const response = await call(built);
      expect(response.status).toBe(200);
      expect(response.headers.get("RateLimit-Limit")).toBeNull();
    }
  });

  it("admits max requests per window, then 429 in the RPC envelope with Retry-After and RateLimit-*", async () => {
    const built = build(limitedApp({ max: 2, windowMs: 60_000 }));
    const first = await call(built);
    expect(first.status).toBe(200);
    expect(first.headers.get("RateLimit-Limit")).toBe("2");
    expect(first.headers.get("RateLimit-Remaining")).toBe("1");
    expect(Number(first.headers.get("RateLimit-Reset"))).toBeGreaterThan(55);
    expect(Number(first.headers.get("RateLimit-Reset"))).toBeLessThanOrEqual(60);
    expect(first.headers.get("Retry-After")).toBeNull();
    const second = await call(built);
    expect(second.status).toBe(200);
    expect(second.headers.get("RateLimit-Remaining")).toBe("0");
    const third = await call(built);
    expect(third.status).toBe(429);
    expect(third.headers.get("RateLimit-Limit")).toBe("2");
    expect(third.headers.get("RateLimit-Remaining")).toBe("0");
    expect(third.headers.get("Retry-After")).toBe(third.headers.get("RateLimit-Reset"));
    expect(Number(third.headers.get("Retry-After"))).toBeGreaterThan(0);
    const body = (await third.json()) as any;
    expect(body.json).toMatchObject({ defined: false, code: "TOO_MANY_REQUESTS", status: 429 });
    expect(body.json.message).toMatch(/limit is 2 per 60000 ms/);
  });

  it("answers 429 on /rest/** with the plain error body", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000 }));
    const missing = await request(built, "GET", "/rest/anything");
    expect(missing.status).toBe(404);
    // Error responses carry the headers too.
    expect(missing.headers.get("RateLimit-Remaining")).toBe("0");
    const limited = await request(built, "GET", "/rest/anything");
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: "TOO_MANY_REQUESTS", status: 429 });
    expect(limited.headers.get("Retry-After")).not.toBeNull();
  });

  it("never counts /health, /api/auth/**, raw routes, paths that only start like /rpc, or preflights", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000 }, { cors: { origins: ["http://web.test"] } }));
    for (let i = 0; i < 3; i++) {
      for (const path of ["/health", "/rpcx", "/plain", "/api/auth/ok"]) {
        const response = await built.handle(new Request(`http://localhost${path}`), from("203.0.113.1"));
        expect(response.headers.get("RateLimit-Limit"), path).toBeNull();
        expect(response.status, path).not.toBe(429);
      }
      const preflight = await built.handle(
        new Request("http://localhost/rpc/ping", { method: "OPTIONS", headers: { origin: "http://web.test", "access-control-request-method": "POST" } }),
        from("203.0.113.1"),
      );
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("RateLimit-Limit")).toBeNull();
    }
    expect((await call(built)).status).toBe(200);
    expect((await call(built)).status).toBe(429);
  });

  it("keys by client address, and by user id for signed-in callers whatever their address", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000 }));
    expect((await call(built, "198.51.100.1")).status).toBe(200);
    expect((await call(built, "198.51.100.1")).status).toBe(429);
    // Ada and Bo behind the address that spent its budget: each has a budget of their own.
    expect((await call(built, "198.51.100.1", { "x-api-key": "ada" })).status).toBe(200);
    expect((await call(built, "198.51.100.1", { "x-api-key": "bo" })).status).toBe(200);
    // Ada from another address: still her bucket.
    const again = await call(built, "198.51.100.4", { "x-api-key": "ada" });
    expect(again.status).toBe(429);
    expect(((await again.json()) as any).json.message).toMatch(/limit is 1 per 60000 ms/);
    expect((await call(built, "198.51.100.3")).status).toBe(200);
  });

  it("gives every custom key its own budget, whatever address it comes from", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000, key: (event) => `tenant:${event.headers.get("x-tenant")}` }));
    expect((await call(built, "198.51.100.1", { "x-tenant": "a" })).status).toBe(200);
    expect((await call(built, "198.51.100.1", { "x-tenant": "b" })).status).toBe(200);
    expect((await call(built, "198.51.100.1", { "x-tenant": "a" })).status).toBe(429);
    expect((await call(built, "198.51.100.1", { "x-tenant": "c", "x-api-key": "ada" })).status).toBe(200);
  });

  it("counts failed credentials against the address, and past its budget looks none up", async () => {
    let lookups = 0;
    const counting = definePlugin({
      name: "sessions",
      stage: "identity",
      provides: ["session"],
      build: (ctx) =>
        ctx.hooks.session.tap(async (event) => {
          lookups++;
          const name = event.headers.get("x-api-key")!;
          return name.startsWith("guess") ? undefined : { user: { id: name, email: `${name}@x`, name }, session: { id: "s", userId: name, expiresAt: new Date(8.64e15) } };
        }),
    });
    const built = build(
      new App({ db: sqliteMemory(), rateLimit: { max: 5, maxPerAddress: 2, windowMs: 60_000, key: (event, user) => (user ? `user:${user.id}` : `tenant:${event.headers.get("x-api-key")}`) }, onError: () => {} })
        .use(counting)
        .procedure("ping", (base) => base.handler(() => "pong")),
    );
    // Each guess has a key of its own: only the address's count of failures holds them back.
    const first = await call(built, "192.0.2.1", { "x-api-key": "guess-1" });
    expect([first.status, first.headers.get("RateLimit-Limit"), first.headers.get("RateLimit-Remaining")]).toEqual([200, "2", "1"]);
    expect((await call(built, "192.0.2.1", { "x-api-key": "guess-2" })).status).toBe(200);
    // Over the address's budget of failures: refused before the credential is read, whoever it names.
    for (const key of ["guess-3", "ada"]) {
      const refused = await call(built, "192.0.2.1", { "x-api-key": key });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("RateLimit-Limit")).toBe("2");
    }
    expect(lookups).toBe(2);
    // A request without a credential is not held back by them, nor is Ada from elsewhere, whose
    // budget of 5 is her own.
    expect((await call(built, "192.0.2.1")).status).toBe(200);
    const seen: Array<[number, string | null, string | null]> = [];
    for (const address of ["192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5", "192.0.2.6", "192.0.2.7"]) {
      const response = await call(built, address, { "x-api-key": "ada" });
      seen.push([response.status, response.headers.get("RateLimit-Limit"), response.headers.get("RateLimit-Remaining")]);
    }
    expect(seen).toEqual([
      [200, "5", "4"],
      [200, "5", "3"],
      [200, "5", "2"],
      [200, "5", "1"],
      [200, "5", "0"],
      [429, "5", "0"],
    ]);
  });

  it("without a transport address, falls back to X-Forwarded-For's first entry, then X-Real-IP", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000 }));
    const plain = (headers: Record<string, string>) => rpc(built, "ping", undefined, headers);
    expect((await plain({ "x-forwarded-for": "192.0.2.1, 10.0.0.1" })).status).toBe(200);
    expect((await plain({ "x-forwarded-for": "192.0.2.1" })).status).toBe(429);
    expect((await plain({ "x-real-ip": "192.0.2.2" })).status).toBe(200);
    expect((await plain({ "x-forwarded-for": "not-an-ip", "x-real-ip": "192.0.2.2" })).status).toBe(429);
  });

  it("honours skip and a custom key (which receives the signed-in user)", async () => {
    const keys: string[] = [];
    const built = build(
      limitedApp({
        max: 1,
        maxPerAddress: 10,
        windowMs: 60_000,
        skip: (event) => event.headers.get("x-internal") === "yes",
        key: (event, user) => {
          const key = `${user?.id ?? "anon"}:${event.headers.get("x-tenant")}`;
          keys.push(key);
          return key;
        },
      }),
    );
    expect((await call(built, "1.1.1.1", { "x-tenant": "a" })).status).toBe(200);
    expect((await call(built, "2.2.2.2", { "x-tenant": "a" })).status).toBe(429);
    expect((await call(built, "2.2.2.2", { "x-tenant": "b" })).status).toBe(200);
    expect((await call(built, "2.2.2.2", { "x-tenant": "b", "x-api-key": "ada" })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(built, "1.1.1.1", { "x-tenant": "a", "x-internal": "yes" })).status).toBe(200);
    expect(keys).toEqual(["anon:a", "anon:a", "anon:b", "ada:b"]);
  });

  it("starts a new window once the old one ends", async () => {
    // A window long enough that the second call lands in it on a busy machine.
    const built = build(limitedApp({ max: 1, windowMs: 1_000 }));
    expect((await call(built)).status).toBe(200);
    expect((await call(built)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await call(built)).status).toBe(200);
  });

  it("puts the CORS headers on a 429 and exposes the RateLimit headers to the browser", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000 }, { cors: { origins: ["http://web.test"] } }));
    const headers = { origin: "http://web.test" };
    await call(built, "203.0.113.5", headers);
    const limited = await call(built, "203.0.113.5", headers);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Access-Control-Allow-Origin")).toBe("http://web.test");
    expect(limited.headers.get("Access-Control-Expose-Headers")).toMatch(/RateLimit-Remaining/);
    expect(limited.headers.get("Access-Control-Expose-Headers")).toMatch(/Retry-After/);
  });

  it("sits on the edge stage after CORS and before the body limit, and closes its store with the app", async () => {
    const app = new App({ db: sqliteMemory(), rateLimit: { max: 1, windowMs: 60_000 } });
    const built = app.build();
    const names = built.describe().plugins.map((plugin: { name: string }) => plugin.name);
    expect(names.slice(0, 4)).toEqual(["telemetry", "cors", "rate-limit", "body-limit"]);
    expect(built.describe().hooks.close).toContain("rate-limit");
    await built.close();
  });

  it("is skipped by the in-process client", async () => {
    const built = build(limitedApp({ max: 1, windowMs: 60_000 }));
    const client = built.client() as any;
    for (let i = 0; i < 3; i++) expect(await client.ping()).toBe("pong");
  });

  it("refuses a config it cannot apply at build, listing every problem", () => {
    const error = errorOf(() => limitedApp({ max: 0, maxPerAddress: -1, windowMs: 1.5, onStoreError: "maybe" as never }).build());
    expect(error.code).toBe("RATE_LIMIT_INVALID");
    expect(error.message).toMatch(/max must be/);
    expect(error.message).toMatch(/maxPerAddress must be a whole number of requests above 0, got -1/);
    expect(error.message).toMatch(/windowMs must be/);
    expect(error.message).toMatch(/onStoreError must be/);
  });
});

describe("rate limit store failures", () => {
  const broken = { hit: () => Promise.reject(new Error("connection refused")) };

  it("fail open by default: requests pass uncounted, the outage is reported once, never a 500", async () => {
    const onError = vi.fn();
    const built = build(limitedApp({ max: 1, windowMs: 60_000, store: broken }, { onError }));
    for (let i = 0; i < 3; i++) {
      const response = await call(built);
      expect(response.status).toBe(200);
      expect(response.headers.get("RateLimit-Limit")).toBeNull();
    }
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0][0].cause.message).toBe("connection refused");
    expect(onError.mock.calls[0][1]).toEqual({ source: "rpc" });
  });

  it("fail closed on request: 503 in the RPC envelope with Retry-After", async () => {
    const onError = vi.fn();
    const throwing = {
      hit: () => {
        throw new Error("store down");
      },
    };
    const built = build(limitedApp({ max: 1, windowMs: 60_000, store: throwing, onStoreError: "closed" }, { onError }));
    const response = await call(built);
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(((await response.json()) as any).json).toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503 });
    expect(onError).toHaveBeenCalledTimes(1);
  });
});

describe("memoryRateLimitStore", () => {
  it("counts per key in fixed windows", () => {
    const store = memoryRateLimitStore();
    const a1 = store.hit("a", 1000);
    const a2 = store.hit("a", 1000);
    expect([a1.count, a2.count, store.hit("b", 1000).count]).toEqual([1, 2, 1]);
    expect(a2.resetAt).toBe(a1.resetAt);
    store.close();
  });

  it("is bounded: expired windows are swept, then new keys share one overflow bucket", async () => {
    const store = memoryRateLimitStore({ maxKeys: 3 });
    store.hit("old", 10);
    await new Promise((resolve) => setTimeout(resolve, 20));
    store.hit("a", 60_000);
    store.hit("b", 60_000);
    store.hit("c", 60_000); // "old" expired: swept to make room
    expect(store.size).toBe(3);
    expect(store.hit("d", 60_000).count).toBe(1);
    expect(store.hit("e", 60_000).count).toBe(2); // d and e share the overflow bucket
    expect(store.size).toBe(4);
    expect(store.hit("a", 60_000).count).toBe(2);
    store.close();
    expect(store.size).toBe(0);
  });

  it("sweeps on a timer that never holds the process, released by close()", async () => {
    vi.useFakeTimers();
    try {
      const store = memoryRateLimitStore({ sweepIntervalMs: 1000 });
      store.hit("a", 500);
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(1000);
      expect(store.size).toBe(0);
      // Nothing left to sweep: the timer stops until a key arrives.
      expect(vi.getTimerCount()).toBe(0);
      store.hit("b", 5000);
      expect(vi.getTimerCount()).toBe(1);
      store.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
