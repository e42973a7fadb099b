/**
 * `npm run bench -- jobs`: jobs per second sent and handled through Trellis (`.job()` on the app's
 * Kysely instance) against pg-boss used directly on the same kind of database (its own pool on
 * PostgreSQL, a plain serialised adapter on PGlite), with the same batch size and polling; the
 * latency from `send` to the handler's start, one job at a time; and, on PostgreSQL, 1,000 jobs
 * across three replicas, each handled exactly once.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import PgBoss from "pg-boss";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { embedded } from "../../kernel/embedded/index.js";
import { App } from "../../presets/trellis.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const LATENCY_SAMPLES = 100;
const BATCH = 10;
const POLL = 0.5;
const url = process.env.DATABASE_URL;

interface Options {
  /** Run handlers (false: measure sending alone). */
  work: boolean;
}
interface Engine {
  send(n: number): Promise<unknown>;
  close(): Promise<void>;
}
interface Run {
  sent: number;
  handled: number;
}

export async function run(): Promise<void> {
  console.log(`\n## jobs: ${JOBS} jobs, batch ${BATCH}, polling ${POLL} s`);
  type Open = (h: Handler, o?: Options) => Promise<Engine>;
  const families: { name: string; trellis: Open; direct: Open }[] = [{ name: "PGlite", trellis: (h, o) => trellisEngine(h, "pglite", o), direct: directPglite }];
  if (url) families.push({ name: "PostgreSQL", trellis: (h, o) => trellisEngine(h, "postgres", o), direct: directPostgres });
  else console.log("  (PostgreSQL skipped: DATABASE_URL is not set)");
  for (const family of families) {
    const label = family.name.padEnd(11);
    // Alternating rounds, best of each: the first instance in a process pays for warming up.
    let sendTrellis = 0;
    let sendDirect = 0;
    for (let round = 0; round < 2; round++) {
      sendDirect = Math.max(sendDirect, await sendOnly(family.direct));
      sendTrellis = Math.max(sendTrellis, await sendOnly(family.trellis));
    }
    const trellis = await throughput(family.trellis);
    const direct = await throughput(family.direct);
    const latency = await sendToStart(family.trellis);
    console.log(`  ${label} sending alone (no workers): trellis ${sendTrellis.toFixed(0)}/s, pg-boss ${sendDirect.toFixed(0)}/s, ratio ${(sendTrellis / sendDirect).toFixed(2)} (target >= 0.8) ${sendTrellis / sendDirect >= 0.8 ? "OK" : "BELOW TARGET"}`);
    const line = (name: string, r: Run) => console.log(`  ${label} ${name.padEnd(9)} sending while working ${r.sent.toFixed(0).padStart(5)}/s   all ${JOBS} handled at ${r.handled.toFixed(0).padStart(5)}/s`);
    line("trellis", trellis);
    line("pg-boss", direct);
    const ratio = trellis.handled / direct.handled;
    console.log(`  ${label} handled ratio trellis / pg-boss: ${ratio.toFixed(2)} (target >= 0.8) ${ratio >= 0.8 ? "OK" : "BELOW TARGET"}`);
    console.log(`  ${family.name.padEnd(11)} send to handler start, one at a time: p50 ${latency.p50.toFixed(1)} ms   p99 ${latency.p99.toFixed(1)} ms`);
  }
  if (url) await replicas();
}

type Handler = (data: { n: number; at: number }) => void;

async function throughput(open: (handler: Handler) => Promise<Engine>): Promise<Run> {
  let handled = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const engine = await open(() => {
    if (++handled === JOBS) done();
  });
  const start = performance.now();
  for (let n = 0; n < JOBS; n++) await engine.send(n);
  const sentIn = performance.now() - start;
  await all;
  const handledIn = performance.now() - start;
  await engine.close();
  return { sent: (JOBS / sentIn) * 1000, handled: (JOBS / handledIn) * 1000 };
}

async function sendOnly(open: (handler: Handler, options?: Options) => Promise<Engine>): Promise<number> {
  const engine = await open(() => undefined, { work: false });
  const start = performance.now();
  for (let n = 0; n < JOBS; n++) await engine.send(n);
  const elapsed = performance.now() - start;
  await engine.close();
  return (JOBS / elapsed) * 1000;
}

async function sendToStart(open: (handler: Handler) => Promise<Engine>): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  let next!: () => void;
  const engine = await open(({ at }) => {
    samples.push(performance.timeOrigin + performance.now() - at);
    next();
  });
  for (let n = 0; n < LATENCY_SAMPLES; n++) {
    const started = new Promise<void>((resolve) => (next = resolve));
    await engine.send(n);
    await started;
  }
  await engine.close();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, p99: samples[Math.floor(samples.length * 0.99)]! };
}

async function trellisEngine(handler: Handler, family: "pglite" | "postgres", options: Options = { work: true }): Promise<Engine> {
  const { db, cleanup, schema } = family === "pglite" ? { db: embedded({ dataDir: "memory://" }), cleanup: async () => undefined, schema: "" } : await postgresSchema();
  const app = await new App({ db, onError: (error) => console.error(error) })
    .jobs({ pollingInterval: POLL, schema: schema ? `${schema}_jobs` : undefined, work: options.work })
    .job("bench", { concurrency: BATCH }, ({ data }) => handler(data as { n: number; at: number }))
    .start();
  const jobs = app.sealed.service("jobs")!;
  return {
    send: (n) => jobs.send("bench", { n, at: performance.timeOrigin + performance.now() }),
    close: async () => {
      await app.close();
      await cleanup();
    },
  };
}

async function direct(boss: PgBoss, handler: Handler, close: () => Promise<void>, options: Options = { work: true }): Promise<Engine> {
  boss.on("error", (error) => console.error(error));
  await boss.start();
  await boss.createQueue("bench");
  if (options.work) await boss.work<{ n: number; at: number }>("bench", { batchSize: BATCH, pollingIntervalSeconds: POLL }, async (jobs) => {
    for (const job of jobs) handler(job.data);
  });
  return {
    send: (n) => boss.send("bench", { n, at: performance.timeOrigin + performance.now() }),
    close: async () => {
      await boss.stop({ graceful: true, wait: true, close: true, timeout: 1000 });
      await close();
    },
  };
}

async function directPglite(handler: Handler, options?: Options): Promise<Engine> {
  const database = embedded({ dataDir: "memory://" });
  const client = database.client;
  // The spike's adapter: one statement at a time, the extended protocol with values, simple without.
  let tail: Promise<unknown> = Promise.resolve();
  const executeSql = (text: string, values?: unknown[]) => {
    const result = tail.then(async () => {
      if (values && values.length) return client.query(text, values.map((v) => (v !== null && typeof v === "object" && !(v instanceof Date) && !Array.isArray(v) ? JSON.stringify(v) : v)));
      const results = await client.exec(text);
      return results.at(-1) ?? { rows: [] };
    });
    tail = result.catch(() => undefined);
    return result as Promise<{ rows: any[] }>;
  };
  return direct(new PgBoss({ db: { executeSql } } as PgBoss.ConstructorOptions), handler, () => database.close(), options);
}

async function directPostgres(handler: Handler, options?: Options): Promise<Engine> {
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  return direct(new PgBoss({ connectionString: url, schema, max: 4 }), handler, () => drop(schema), options);
}

async function postgresSchema() {
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  await admin(`create schema ${schema}`);
  const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` });
  return {
    schema,
    db: { dialect: postgresDialect({ pool }), kind: "postgres" as const },
    cleanup: async () => {
      await drop(schema);
      await drop(`${schema}_jobs`);
    },
  };
}

async function replicas(): Promise<void> {
  const { schema, cleanup } = await postgresSchema();
  const jobsSchema = `${schema}_jobs`;
  const seen = new Map<number, number>();
  let handled = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const apps: any[] = [];
  for (let replica = 0; replica < 3; replica++) {
    const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` });
    const app = new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres" } })
      .jobs({ schema: jobsSchema, pollingInterval: POLL })
      .job("bench", { concurrency: BATCH }, ({ data }) => {
        const { n } = data as { n: number };
        seen.set(n, (seen.get(n) ?? 0) + 1);
        if (++handled === JOBS) done();
      });
    apps.push(replica === 0 ? await app.start() : app.build());
  }
  await Promise.all(apps.map((app) => app.sealed.ready()));
  const start = performance.now();
  await Promise.all(Array.from({ length: JOBS }, (_, n) => apps[n % 3]!.sealed.service("jobs")!.send("bench", { n })));
  await all;
  const elapsed = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const twice = [...seen.values()].filter((count) => count > 1).length;
  console.log(`  PostgreSQL  3 replicas: ${JOBS} jobs handled in ${(elapsed / 1000).toFixed(2)} s, ${seen.size} distinct, ${twice} more than once ${seen.size === JOBS && twice === 0 ? "OK" : "WRONG"}`);
  await Promise.all(apps.map((app) => app.close()));
  await cleanup();
  await drop(jobsSchema);
}

async function drop(schema: string): Promise<void> {
  await admin(`drop schema if exists ${schema} cascade`);
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
