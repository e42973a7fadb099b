// Redis going away under load: the rate limit follows its failure policy (open lets requests
// through, closed answers 503, never a 500), sessions fall back to the database, and everything
// recovers when Redis is back, without restarting the app. Redis here is a server of the test's
// own, stopped with SIGKILL and started again on the same port.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { z } from "zod";
import { redisRateLimitStore, redisSecondaryStorage } from "../../kernel/redis/index.js";
import { schema } from "../../kernel/schema/index.js";
import { openDatabase } from "../support/databases.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { ownRedis, redisServerMissing, type OwnRedis } from "../support/redis-server.js";
import { sleep, steadyLoad, waitUntil } from "./load.js";

const missing = redisServerMissing();
if (missing) console.log(`skipping Redis chaos: ${missing}`);
const SECRET = "a-test-secret-that-is-long-enough-1234567890";
const v1 = schema("1").auth().table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.skipIf(Boolean(missing))("Redis chaos", () => {
  let redis: OwnRedis;
  let client: Redis;
  const servers: Record<"open" | "closed", RunningServer | undefined> = { open: undefined, closed: undefined };

  // SQLite keeps the file fast: the database is not what this case is about.
  const app = async (policy: "open" | "closed") =>
    new App({
      db: await openDatabase("sqlite"),
      baseUrl: ORIGIN,
      onError: () => {},
      rateLimit: { max: 100_000, windowMs: 60_000, store: redisRateLimitStore(client, { prefix: `${policy}:rl:`, timeoutMs: 200 }), onStoreError: policy },
    })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true }, secondaryStorage: redisSecondaryStorage(client, { prefix: `${policy}:auth:`, timeoutMs: 200 }), session: { storeSessionInDatabase: true } })
      .resource("note")
      .openapi()
      .procedure("me", (base) => base.input(z.object({})).handler(({ context }) => context.user?.email ?? null), { permission: "authenticated" });

  beforeAll(async () => {
    redis = await ownRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    client.on("error", () => {}); // ioredis reports every failed reconnect; the stores answer for them
    servers.open = await serve(await app("open"), { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
    servers.closed = await serve(await app("closed"), { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  });

  afterAll(async () => {
    await servers.open?.close();
    await servers.closed?.close();
    client?.disconnect();
    await redis?.stop();
  });

  const call = (base: string, path: string, body: unknown, cookie?: string) =>
    fetch(`${base}/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, ...(cookie ? { cookie } : {}) }, body: JSON.stringify({ json: body }) });
  const asHandler = (base: string) => ({ handle: (request: Request) => fetch(new Request(new URL(new URL(request.url).pathname, base), request)) });

  it("stopped: open lets requests through, closed answers 503, sessions come from the database; both recover", async () => {
    const open = servers.open!.url;
    const closed = servers.closed!.url;
    const alice = await signUp(asHandler(open), "alice@example.com");
    expect((await call(open, "me", {}, alice.cookie)).status).toBe(200);
    // Steady mixed load on both servers through the whole outage and the recovery.
    const loads = { open: steadyLoad(open, { workers: 2, pauseMs: 5 }), closed: steadyLoad(closed, { workers: 2, pauseMs: 5 }) };
    await waitUntil(() => loads.open.report.acknowledged.length > 5 && loads.closed.report.acknowledged.length > 5, 10_000, "the load warming up");

    await redis.stop();
    const started = Date.now();
    const openStatuses: number[] = [];
    const closedAnswers: { status: number; message: string }[] = [];
    for (let i = 0; i < 5; i++) {
      openStatuses.push((await call(open, "note/create", { body: `while down ${i}` })).status);
      const answer = await call(closed, "note/list", {});
      closedAnswers.push({ status: answer.status, message: (await answer.json()).json?.message });
    }
    const me = await call(open, "me", {}, alice.cookie);
    const signedInWhileDown = await me.json();
    console.log(`Redis down: open ${JSON.stringify(openStatuses)}, closed ${JSON.stringify(closedAnswers.map((a) => a.status))} "${closedAnswers[0].message}", session lookup ${me.status}, ${Date.now() - started} ms for 11 requests`);
    expect(openStatuses).toEqual([200, 200, 200, 200, 200]);
    expect(closedAnswers.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
    expect(closedAnswers[0].message).toMatch(/rate limit/i);
    expect(me.status).toBe(200);
    expect(signedInWhileDown.json).toBe("alice@example.com");

    await redis.start();
    const recovered = await waitUntil(async () => (await call(closed, "note/list", {})).status === 200, 10_000, "the closed policy admitting again");
    console.log(`Redis back: the closed policy admits again after ${recovered} ms`);
    expect((await call(open, "me", {}, alice.cookie)).status).toBe(200);
    await sleep(10);
    const open_ = await loads.open.stop();
    const closed_ = await loads.closed.stop();
    console.log(`under load: open ${JSON.stringify(open_.statuses)}, closed ${JSON.stringify(closed_.statuses)}`);
    // Open never refuses; closed refuses with 503 and nothing else; neither answers a 500.
    expect(open_.unexpected).toEqual([]);
    expect(open_.statuses[503]).toBeUndefined();
    expect(closed_.unexpected).toEqual([]);
    expect(closed_.statuses[503]).toBeGreaterThan(0);
  }, 90_000); // its named waits (10-30 s each) fail first; a loaded machine needs more than the default 30 s
});
