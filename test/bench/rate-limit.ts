/**
 * `npm run bench -- rate-limit`: what the limiter costs per request (no limiter vs the memory store
 * vs the Redis store, in process), and, on PostgreSQL, the throughput of three replica processes
 * against one. Redis and PostgreSQL parts run when REDIS_URL / DATABASE_URL are set.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { sql } from "kysely";
import pg from "pg";
import { Redis } from "ioredis";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { redisRateLimitStore } from "../../kernel/redis/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { compare, print } from "./measure.js";
import { benchApp } from "./replica-app.js";

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);

export async function run(): Promise<void> {
  await overhead();
  await replicas();
}

async function overhead(): Promise<void> {
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
  const app = (rateLimit?: ConstructorParameters<typeof App>[0]["rateLimit"]) =>
    new App({ db: sqliteMemory(), rateLimit }).procedure("ping", (base) => base.handler(() => "pong")).build();
  const apps = {
    "no limiter": app(),
    "memory store": app({ max: 1e9, windowMs: 60_000 }),
    ...(redis ? { "Redis store": app({ max: 1e9, windowMs: 60_000, store: redisRateLimitStore(redis, { prefix: "bench:rl:" }) }) } : {}),
  };
  const request = () => new Request("http://localhost/rpc/ping", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  const facts = { clientAddress: "203.0.113.1" };
  const stats = await compare(
    Object.entries(apps).map(([name, built]) => ({ name, op: async () => (await built.handle(request(), facts)).text() })),
    { rounds: 3, count: 4000 },
  );
  print("Rate limit overhead (trivial procedure, in process, sequential)", stats, { of: "memory store", to: "no limiter", target: 0.95 });
  if (redis) {
    const ratio = stats[2].perSecond / stats[0].perSecond;
    console.log(`  ratio Redis store / no limiter: ${ratio.toFixed(2)} (reported; one Redis round trip per request)`);
    await redis.del("bench:rl:ip:203.0.113.1");
    redis.disconnect();
  }
  for (const built of Object.values(apps)) await built.close();
}

async function replicas(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.log("\n## Three replicas vs one: skipped (DATABASE_URL is not set)");
    return;
  }
  const schemaName = `bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schemaName}`);
  try {
    const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schemaName}` });
    const setup = await benchApp({ dialect: postgresDialect({ pool }), kind: "postgres" }).start();
    await sql`insert into post (title, body) select 'post ' || i, repeat('text ', 20) from generate_series(1, 10000) as i`.execute(setup.db);
    await setup.close();

    const one = await drive(await children(1, schemaName), 12);
    const three = await drive(await children(3, schemaName), 12);
    console.log(`\n## Three replicas vs one (PostgreSQL${process.env.REDIS_URL ? " + Redis rate limit" : ""}, list 20 rows, 12 connections, ${DURATION} s)`);
    console.log(`  one replica      ${one.toFixed(0).padStart(7)} req/s`);
    console.log(`  three replicas   ${three.toFixed(0).padStart(7)} req/s`);
    console.log(`  ratio three / one: ${(three / one).toFixed(2)} (reported; this machine has 2 cores shared with the load generator)`);
  } finally {
    await admin.query(`drop schema if exists ${schemaName} cascade`);
    await admin.end();
  }
}

interface Replicas {
  urls: string[];
  stop(): Promise<void>;
}

async function children(count: number, schemaName: string): Promise<Replicas> {
  const script = fileURLToPath(new URL("./replica-child.ts", import.meta.url));
  const started: ChildProcess[] = [];
  const urls = await Promise.all(
    Array.from({ length: count }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", script], { env: { ...process.env, BENCH_SCHEMA: schemaName }, stdio: ["ignore", "pipe", "inherit"] });
      started.push(child);
      return new Promise<string>((resolve, reject) => {
        child.once("exit", (code) => reject(new Error(`replica exited with ${code}`)));
        createInterface({ input: child.stdout! }).once("line", (line) => resolve(JSON.parse(line).url));
      });
    }),
  );
  return {
    urls,
    stop: () =>
      Promise.all(
        started.map((child) => new Promise<void>((resolve) => {
          child.removeAllListeners("exit");
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        })),
      ).then(() => undefined),
  };
}

/** Total req/s with `connections` spread evenly over the replicas (a round-robin balancer's effect). */
async function drive(replicas: Replicas, connections: number): Promise<number> {
  const request = { method: "POST" as const, path: "/rpc/post/list", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { take: 20 } }) };
  const per = Math.max(1, Math.floor(connections / replicas.urls.length));
  try {
    await Promise.all(replicas.urls.map((url) => autocannon({ url, connections: per, duration: 1, requests: [request] })));
    const results = await Promise.all(replicas.urls.map((url) => autocannon({ url, connections: per, duration: DURATION, requests: [request] })));
    const failed = results.reduce((sum, result) => sum + result.non2xx, 0);
    if (failed > 0) console.log(`    (${failed} failed answers)`);
    return results.reduce((sum, result) => sum + result.requests.average, 0);
  } finally {
    await replicas.stop();
  }
}
