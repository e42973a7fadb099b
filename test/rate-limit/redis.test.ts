import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Redis } from "ioredis";
import { redisKV, redisRateLimitStore, redisSecondaryStorage } from "../../kernel/redis/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, sqliteMemory } from "../support/app.js";
import { dropPrefix, freshPrefix, hasRedis, openRedis, redisRelay } from "../support/redis.js";

const build = closeAfterEach();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(hasRedis("Redis adapter tests"))("trellis/redis", () => {
  const prefix = freshPrefix("redis");
  let client: Redis;
  let other: Redis;
  beforeAll(() => {
    client = openRedis();
    other = openRedis();
  });
  afterAll(async () => {
    await dropPrefix(client, prefix);
    client.disconnect();
    other.disconnect();
  });

  describe("redisRateLimitStore", () => {
    it("counts atomically across clients: concurrent hits get every count exactly once", async () => {
      const stores = [redisRateLimitStore(client, { prefix }), redisRateLimitStore(other, { prefix })];
      const hits = await Promise.all(Array.from({ length: 100 }, (_, i) => stores[i % 2].hit("burst", 60_000)));
      expect(hits.map((hit) => hit.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      const resets = hits.map((hit) => hit.resetAt);
      // One window: every hit reports (about) the same end, about a minute away.
      expect(Math.max(...resets) - Math.min(...resets)).toBeLessThan(1000);
      expect(Math.min(...resets) - Date.now()).toBeGreaterThan(58_000);
    });

    it("takes one round trip per hit, and the window's expiry is never extended", async () => {
      // A 2 s window: the first three hits land in it even when each round trip is slow.
      const store = redisRateLimitStore(client, { prefix });
      await store.hit("trip", 2_000); // loads the script
      const send = vi.spyOn(client, "sendCommand");
      const second = await store.hit("trip", 2_000);
      expect(send).toHaveBeenCalledTimes(1);
      send.mockRestore();
      expect(second.count).toBe(2);
      await sleep(500);
      const third = await store.hit("trip", 2_000);
      expect(third.count).toBe(3);
      // Extended, it would end 500 ms later; the margin is for the round trips' own timing.
      expect(Math.abs(third.resetAt - second.resetAt)).toBeLessThan(250);
      await sleep(Math.max(0, second.resetAt - Date.now()) + 100);
      expect((await store.hit("trip", 2_000)).count).toBe(1);
    });

    it("shares one limit between two apps", async () => {
      const limit = { max: 3, windowMs: 60_000 };
      const apps = [client, other].map((redis) =>
        build(
          new App({ db: sqliteMemory(), rateLimit: { ...limit, store: redisRateLimitStore(redis, { prefix: `${prefix}shared:` }) } }).procedure(
            "ping",
            (base) => base.handler(() => "pong"),
          ),
        ),
      );
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const response = await apps[i % 2].handle(
          new Request("http://localhost/rpc/ping", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
          { clientAddress: "203.0.113.1" },
        );
        statuses.push(response.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    });
  });

  describe("store failures", () => {
    const ping = (app: { handle: (r: Request, f?: any) => Promise<Response> }) =>
      app.handle(new Request("http://localhost/rpc/ping", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), {
        clientAddress: "203.0.113.2",
      });

    it("follow the policy while Redis is away, never a 500, and count again once it is back", async () => {
      const relay = await redisRelay();
      const flaky = new Redis({ host: "127.0.0.1", port: relay.port, retryStrategy: () => 50, maxRetriesPerRequest: 1 });
      flaky.on("error", () => {}); // refused connections while cut are expected here
      const onError = vi.fn();
      const store = redisRateLimitStore(flaky, { prefix: `${prefix}flaky:`, timeoutMs: 200 });
      const open = build(new App({ db: sqliteMemory(), onError, rateLimit: { max: 2, windowMs: 60_000, store } }).procedure("ping", (base) => base.handler(() => "pong")));
      const closed = build(
        new App({ db: sqliteMemory(), onError: () => {}, rateLimit: { max: 2, windowMs: 60_000, store, onStoreError: "closed" } }).procedure("ping", (base) =>
          base.handler(() => "pong"),
        ),
      );
      try {
        const first = await ping(open);
        expect(first.status).toBe(200);
        expect(first.headers.get("RateLimit-Remaining")).toBe("1");

        await relay.cut();
        const during = await ping(open);
        expect(during.status).toBe(200);
        expect(during.headers.get("RateLimit-Limit")).toBeNull();
        expect((await ping(open)).status).toBe(200);
        expect(onError).toHaveBeenCalledTimes(1);
        const refused = await ping(closed);
        expect(refused.status).toBe(503);
        expect(refused.headers.get("Retry-After")).toBe("1");

        await relay.restore();
        await vi.waitFor(async () => expect((await ping(open)).headers.get("RateLimit-Limit")).toBe("2"), { timeout: 5000, interval: 100 });
        // Counting resumed on the same window: one hit before the outage, at least one after.
        const after = await ping(closed);
        expect([200, 429]).toContain(after.status);
        expect(after.headers.get("RateLimit-Limit")).toBe("2");
      } finally {
        flaky.disconnect();
        await relay.close();
      }
    });
  });

  describe("redisKV", () => {
    it("stores JSON and strings, expires with ttl (seconds), lists and clears by base", async () => {
      const kv = redisKV(client, { prefix: `${prefix}kv:` });
      const seen = redisKV(other, { prefix: `${prefix}kv:` });
      await kv.setItem("user:1", { name: "Ada", tags: ["a"] });
      await kv.setItem("user:2", "plain text");
      await kv.setItem("count", 42);
      await kv.setItem("brief", "soon gone", { ttl: 1 }); // long enough to outlast the reads below on a busy machine
      expect(await seen.getItem("user:1")).toEqual({ name: "Ada", tags: ["a"] });
      expect(await seen.getItem("user:2")).toBe("plain text");
      expect(await seen.getItem("count")).toBe(42);
      expect(await seen.hasItem("brief")).toBe(true);
      expect((await seen.getKeys("user:")).sort()).toEqual(["user:1", "user:2"]);
      await sleep(1_100);
      expect(await seen.hasItem("brief")).toBe(false);
      expect(await seen.getItem("brief")).toBeNull();
      await kv.setItemRaw!("bytes", new Uint8Array([1, 2, 3]));
      expect([...((await seen.getItemRaw!("bytes")) as Buffer)]).toEqual([1, 2, 3]);
      await kv.removeItem("count");
      expect(await seen.hasItem("count")).toBe(false);
      await kv.clear("user:");
      expect(await seen.getKeys()).toEqual(["bytes"]);
      await expect(kv.setItem("bad", 1, { ttl: -1 })).rejects.toThrow(/ttl must be/);
    });
  });

  describe("redisSecondaryStorage", () => {
    it("has the operations the auth library needs, with fixed-window increments", async () => {
      const storage = redisSecondaryStorage(client, { prefix: `${prefix}auth:` });
      await storage.set("a", "1", 60);
      expect(await storage.get("a")).toBe("1");
      expect(await client.ttl(`${prefix}auth:a`)).toBeGreaterThan(55);
      expect(await storage.getAndDelete("a")).toBe("1");
      expect(await storage.get("a")).toBeNull();
      await storage.set("b", "2");
      await storage.delete("b");
      expect(await storage.get("b")).toBeNull();
      expect(await storage.increment("n", 1)).toBe(1);
      expect(await storage.increment("n", 100)).toBe(2);
      expect(await client.pttl(`${prefix}auth:n`)).toBeLessThanOrEqual(1000);
    });
  });
});
