import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import type { Redis } from "ioredis";
import { z } from "zod";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { redisKV, redisRateLimitStore, redisSecondaryStorage } from "../../kernel/redis/index.js";
import { App, type BuiltApp } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, cookieOf } from "../support/auth.js";
import { dropPrefix, freshPrefix, hasRedis, openRedis } from "../support/redis.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping the three-replica test: DATABASE_URL is not set");
const enabled = Boolean(url) && hasRedis("the three-replica test");

const SECRET = "a-test-secret-that-is-long-enough-1234567890";
const v1 = schema("1")
  .auth()
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .build();
const MAX = 10;

describe.runIf(enabled)("the same app on three replicas (one PostgreSQL schema, one Redis)", () => {
  const schemaName = `scale_${Date.now().toString(36)}`;
  const prefix = freshPrefix("scale");
  const pools: pg.Pool[] = [];
  let redis: Redis;
  let replicas: BuiltApp<any, any>[] = [];

  const replica = () => {
    const pool = new pg.Pool({ connectionString: url, max: 3, options: `-c search_path=${schemaName}` });
    pools.push(pool);
    return new App({
      db: { dialect: postgresDialect({ pool }), kind: "postgres" },
      baseUrl: ORIGIN,
      kv: redisKV(redis, { prefix: `${prefix}kv:` }),
      rateLimit: { max: MAX, windowMs: 60_000, store: redisRateLimitStore(redis, { prefix: `${prefix}rl:` }) },
    })
      .schema(v1)
      .auth({
        secret: SECRET,
        emailAndPassword: { enabled: true },
        secondaryStorage: redisSecondaryStorage(redis, { prefix: `${prefix}auth:` }),
        rateLimit: { enabled: true, storage: "secondary-storage" },
      })
      .resource("note")
      .procedure("kv.put", (base) =>
        base.input(z.object({ key: z.string(), value: z.string() })).handler(async ({ input, context }) => {
          await context.kv!.setItem(input.key, input.value, { ttl: 60 });
          return true;
        }),
      )
      .procedure("kv.get", (base) => base.input(z.object({ key: z.string() })).handler(({ input, context }) => context.kv!.getItem(input.key)))
      .procedure("me", (base) => base.handler(({ context }) => context.user?.email ?? null), { permission: "authenticated" });
  };

  /** Round robin, as a load balancer in front of the replicas would. */
  let turn = 0;
  const nextReplica = () => replicas[turn++ % replicas.length];
  const auth = (app: BuiltApp<any, any>, path: string, body: unknown, headers: Record<string, string> = {}, from = "198.51.100.1") =>
    app.handle(
      new Request(`${ORIGIN}/api/auth/${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, ...headers }, body: JSON.stringify(body) }),
      { clientAddress: from },
    );

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schemaName}`);
    await admin.end();
    redis = openRedis();
    // All three start (and so migrate) at once.
    replicas = await Promise.all([replica().start(), replica().start(), replica().start()]);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((app) => app.close()));
    await Promise.all(pools.filter((pool) => !pool.ended).map((pool) => pool.end()));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`drop schema if exists ${schemaName} cascade`);
    await admin.end();
    if (redis) {
      await dropPrefix(redis, prefix);
      redis.disconnect();
    }
  });

  it("ran the migration once, though all three started it", async () => {
    const { rows } = await pools[0].query(`select name from ${schemaName}.kysely_migration`);
    expect(rows.map((row) => row.name)).toEqual(["0001_1"]);
    const created = await rpc(replicas[0], "note.create", { body: "one" });
    expect(created.status).toBe(200);
    expect((await rpc(replicas[2], "note.get", { where: { id: created.body.id } })).body.body).toBe("one");
  });

  it("admits exactly max requests in total for one caller, whichever replica answers", async () => {
    const statuses = await Promise.all(
      Array.from({ length: MAX * 3 }, () =>
        nextReplica()
          .handle(new Request("http://localhost/rpc/note/list", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), {
            clientAddress: "203.0.113.77",
          })
          .then((response) => response.status),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(MAX);
    expect(statuses.filter((status) => status === 429)).toHaveLength(MAX * 2);
  });

  it("reads through one replica what another wrote to the KV", async () => {
    expect((await rpc(replicas[0], "kv.put", { key: "greeting", value: "hello" }, {})).body).toBe(true);
    expect((await rpc(replicas[1], "kv.get", { key: "greeting" })).body).toBe("hello");
    expect((await rpc(replicas[2], "kv.get", { key: "greeting" })).body).toBe("hello");
  });

  it("shares sessions: signed in on one, recognised on the others, signed out everywhere from a third", async () => {
    const signedUp = await auth(replicas[0], "sign-up/email", { email: "ada@example.com", password: "correct-horse-battery-staple", name: "ada" });
    expect(signedUp.status).toBe(200);
    const cookie = cookieOf(signedUp);
    // The session lives in Redis (the auth library's secondary storage), not in one replica's memory.
    expect((await redis.keys(`${prefix}auth:*`)).length).toBeGreaterThan(0);
    expect((await rpc(replicas[1], "me", undefined, { cookie })).body).toBe("ada@example.com");
    expect((await rpc(replicas[2], "me", undefined, { cookie })).body).toBe("ada@example.com");
    expect((await auth(replicas[2], "sign-out", {}, { cookie })).status).toBe(200);
    expect((await rpc(replicas[0], "me", undefined, { cookie })).status).toBe(401);
    expect((await rpc(replicas[1], "me", undefined, { cookie })).status).toBe(401);
  });

  it("holds the auth library's sign-in limit across replicas, per client", async () => {
    const guess = (app: BuiltApp<any, any>, from: string) => auth(app, "sign-in/email", { email: "ada@example.com", password: "wrong-guess-123" }, {}, from);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await guess(nextReplica(), "192.0.2.66")).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Another client, on any replica, is not held back by that one.
    expect((await auth(nextReplica(), "sign-in/email", { email: "ada@example.com", password: "correct-horse-battery-staple" }, {}, "192.0.2.67")).status).toBe(200);
  });
});
