/**
 * Live queries: time from a committed write to the snapshot reaching every subscriber, at 1, 100
 * and 1,000 subscribers, on the embedded database (in process) and on PostgreSQL across two app
 * instances (NOTIFY between them); the memory an idle subscriber holds; and 1,000 DISTINCT
 * owner-scoped subscriptions over SSE through `serve()`, one per signed-in user (distinct.ts).
 */
import { setMaxListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import pg from "pg";
import { embedded } from "../../kernel/embedded/index.js";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { distinct } from "./live-distinct.js";

const v1 = schema("1").table("msg", (t) => ({ id: t.serial().primaryKey(), room: t.text(), body: t.text() })).build();
const WRITES = 20;
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

/** Subscribers on `reader`, writes through `writer`; latency of every delivered snapshot. */
async function latency(reader: any, writer: any, subscribers: number): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  let writtenAt = 0;
  let expected = 0;
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const consumers = Array.from({ length: subscribers }, async () => {
    const stream = reader.db.query.msg.live({ where: { room: "bench" }, orderBy: [{ id: "desc" }], take: 20 }, { signal: controller.signal });
    for await (const rows of stream) {
      if (rows.length && rows[0].id === expected) samples.push(performance.now() - writtenAt);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (let i = 0; i < WRITES; i++) {
    writtenAt = performance.now();
    const [row] = await writer.db.insertInto("msg").values({ room: "bench", body: `m${i}` }).returning("id").execute();
    expected = row.id;
    const target = samples.length + subscribers;
    const deadline = Date.now() + 5000;
    while (samples.length < target && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  controller.abort();
  await Promise.allSettled(consumers);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

async function idleMemory(app: any, count: number): Promise<number> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const streams = Array.from({ length: count }, (_, i) => app.db.query.msg.live({ where: { room: `idle${i}` } }, { signal: controller.signal }));
  await Promise.all(streams.map((stream: any) => stream.next()));
  gc();
  const per = (process.memoryUsage().heapUsed - before) / count;
  controller.abort();
  return per;
}

export async function run(): Promise<void> {
  console.log("\n## live: committed write -> snapshot (p50 / p99 ms; target p99 < 100 ms at 1,000 subscribers)");
  const local = await new App({ db: embedded({ dataDir: "memory://" }) }).schema(v1).start();
  for (const n of [1, 100, 1000]) {
    const { p50, p99 } = await latency(local, local, n);
    console.log(`  embedded, ${String(n).padStart(4)} subscribers: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
  }
  console.log(`  memory per idle subscriber (distinct queries): ${((await idleMemory(local, 1000)) / 1024).toFixed(1)} KB of heap`);
  await local.close();
  await distinct();

  const url = process.env.DATABASE_URL;
  if (!url) {
    console.log("  PostgreSQL: skipped (DATABASE_URL is not set)");
    return;
  }
  const schemaName = `bench_live_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schemaName}`);
  const pools: pg.Pool[] = [];
  const replica = () => {
    const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schemaName}` });
    pools.push(pool);
    return new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres", live: postgresLive({ pool }) } }).schema(v1).resource("msg", { live: true }).start();
  };
  const [a, b] = await Promise.all([replica(), replica()]);
  try {
    for (const n of [1, 100, 1000]) {
      const { p50, p99 } = await latency(a, b, n);
      console.log(`  PostgreSQL, two instances, ${String(n).padStart(4)} subscribers: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
    }
  } finally {
    await a.close();
    await b.close();
    await admin.query(`drop schema if exists ${schemaName} cascade`);
    await admin.end();
  }
}
