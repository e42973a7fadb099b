/**
 * `npm run bench -- soak`: mixed traffic for `SOAK_MINUTES` (10) on the embedded database, then on
 * PostgreSQL when DATABASE_URL is set: RPC creates and lists, REST lists, live subscribers that
 * come and go, uploads and sign-ins, from `SOAK_WORKERS` (6) loops through `serve()` on loopback.
 * Prints, per minute: requests, errors (any 5xx or failed fetch; target 0), p99, RSS and heap; and
 * the open handles left after the server and app closed. Client and server share the process, so
 * RSS and heap include the load generator.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { ORIGIN, cookieOf } from "../support/auth.js";

const v1 = schema("1").auth().table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).files().build();
const SECRET = "a-soak-secret-that-is-long-enough-1234567890";

interface Minute {
  requests: number;
  errors: number;
  latencies: number[];
}

export async function run(): Promise<void> {
  const minutes = Number(process.env.SOAK_MINUTES ?? 10);
  await soak("embedded", minutes, async () => ({ db: embedded({ dataDir: "memory://" }) }));
  const url = process.env.DATABASE_URL;
  if (!url) return console.log("\nPostgreSQL soak skipped: DATABASE_URL is not set");
  const schemaName = `bench_soak_${Date.now().toString(36)}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`create schema ${schemaName}`);
  const pool = new pg.Pool({ connectionString: url, max: 8, options: `-c search_path=${schemaName}` });
  try {
    await soak("PostgreSQL", minutes, async () => ({ db: { dialect: postgresDialect({ pool }), kind: "postgres" as const, live: postgresLive({ pool }) } }));
  } finally {
    if (!pool.ended) await pool.end();
    await admin(`drop schema if exists ${schemaName} cascade`);
  }
}

async function soak(label: string, minutes: number, database: () => Promise<{ db: any }>): Promise<void> {
  console.log(`\n## soak on ${label}: ${minutes} min, ${process.env.SOAK_WORKERS ?? 6} workers`);
  const baseline = countKinds(process.getActiveResourcesInfo());
  const app = new App({ ...(await database()), baseUrl: ORIGIN, storage: memoryStorage(), onError: () => {} })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true }, rateLimit: { enabled: false } })
    .resource("note", { live: true, permissions: { list: "public", get: "public", create: "authenticated", update: "authenticated", delete: "authenticated" } })
    .files({ maxBytes: 256 * 1024 })
    .openapi();
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  server.server.keepAliveTimeout = 60_000;
  const base = server.url;
  const json = (body: unknown, cookie?: string) => ({ method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });
  const email = `soak-${randomBytes(4).toString("hex")}@example.test`;
  const password = "correct-horse-battery-staple";
  const signup = await fetch(`${base}/api/auth/sign-up/email`, json({ email, password, name: "soak" }));
  const cookie = cookieOf(signup);
  const stats: Minute[] = [];
  const memory: { rss: number; heap: number }[] = [];
  const started = Date.now();
  const ends = started + minutes * 60_000;
  const minute = () => (stats[Math.floor((Date.now() - started) / 60_000)] ??= { requests: 0, errors: 0, latencies: [] });
  let firstError: string | undefined;
  const timed = async (work: () => Promise<Response>) => {
    const at = performance.now();
    const bucket = minute();
    try {
      const response = await work();
      await response.arrayBuffer();
      bucket.latencies.push(performance.now() - at);
      bucket.requests++;
      if (response.status >= 500 || response.status === 0) {
        bucket.errors++;
        firstError ??= `${response.status}`;
      }
    } catch (error) {
      bucket.requests++;
      bucket.errors++;
      firstError ??= (error as Error).message;
    }
  };
  const upload = () => {
    const form = new FormData();
    form.set("data", JSON.stringify({ json: { file: {} }, maps: [["file"]] }));
    form.set("0", new Blob([randomBytes(8 * 1024)], { type: "image/png" }), "soak.png");
    return fetch(`${base}/rpc/file/upload`, { method: "POST", headers: { cookie, origin: ORIGIN }, body: form });
  };
  // A subscriber opens the stream, reads its first snapshot, stays 0.5 to 2 s, and leaves.
  const subscribe = async () => {
    const controller = new AbortController();
    const response = await fetch(`${base}/rpc/note/live`, { ...json({ json: { orderBy: [{ id: "desc" }], take: 5 } }), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    setTimeout(() => controller.abort(), 500 + Math.random() * 1500);
    return new Response(null, { status: response.status });
  };
  const operations = [
    () => fetch(`${base}/rpc/note/create`, json({ json: { body: "soak" } }, cookie)),
    () => fetch(`${base}/rpc/note/list`, json({ json: { take: 20, orderBy: [{ id: "desc" }] } })),
    () => fetch(`${base}/rest/note?take=20`),
    () => fetch(`${base}/rpc/note/list`, json({ json: { take: 20 } }, cookie)),
    subscribe,
    upload,
    () => fetch(`${base}/api/auth/sign-in/email`, json({ email, password })),
  ];
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    memory.push({ rss: usage.rss, heap: usage.heapUsed });
  }, 60_000);
  const worker = async (index: number) => {
    for (let turn = index; Date.now() < ends; turn++) await timed(operations[turn % operations.length]!);
  };
  await Promise.all(Array.from({ length: Number(process.env.SOAK_WORKERS ?? 6) }, (_, index) => worker(index)));
  clearInterval(sampler);
  const usage = process.memoryUsage();
  if (memory.length < stats.length) memory.push({ rss: usage.rss, heap: usage.heapUsed });
  await server.close();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  console.log("| minute | requests | errors | p99 (ms) | RSS (MB) | heap (MB) |\n| --- | --- | --- | --- | --- | --- |");
  stats.forEach((bucket, index) => {
    const sorted = bucket.latencies.sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
    const sample = memory[index];
    console.log(`| ${index + 1} | ${bucket.requests} | ${bucket.errors} | ${p99.toFixed(1)} | ${sample ? mb(sample.rss) : "-"} | ${sample ? mb(sample.heap) : "-"} |`);
  });
  if (firstError) console.log(`first error: ${firstError}`);
  // Handles beyond those the process held before the app started (stdio pipes, the runner's own).
  const left = [...countKinds(process.getActiveResourcesInfo())].map(([kind, count]) => [kind, count - (baseline.get(kind) ?? 0)] as const).filter(([, count]) => count > 0);
  console.log(`open handles after close, beyond those held before start: ${left.length ? left.map(([kind, count]) => `${kind} x${count}`).join(", ") : "none"}`);
}

function countKinds(kinds: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}
