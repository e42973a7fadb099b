/**
 * `npm run bench -- http`: Trellis over real HTTP against a hand-written app on the same stack
 * (@hono/node-server, oRPC's RPCHandler, Kysely, zod, better-auth's getSession) doing the same work
 * with no framework around it. Each server runs alone on the embedded database with 10,000 rows;
 * autocannon drives each case for a bounded time; every ratio is Trellis / hand-written.
 */
import { serve as serveNode } from "@hono/node-server";
import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import autocannon from "autocannon";
import { betterAuth } from "better-auth";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { z } from "zod";
import { embedded, type EmbeddedThread } from "../../kernel/embedded/index.js";
import { PGliteDialect } from "../../kernel/db/dialect/pglite.js";
import { schema } from "../../kernel/schema/index.js";
import { App, type AppOptions } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { costLine, costOf, median, registerNoopSdk } from "./telemetry-sdk.js";

/** Both apps' baseURL: the origin their auth trusts. */
const ORIGIN = "http://127.0.0.1";
const SECRET = "bench-secret-bench-secret-bench-secret-1234";
const DURATION = Number(process.env.BENCH_SECONDS ?? 4);
const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), body: t.text(), authorId: t.text().nullable() }))
  .build();

interface Target {
  url: string;
  cookie: string;
  close(): Promise<void>;
}

async function seed(db: Kysely<any>) {
  await sql`insert into post (title, body) select 'post ' || i, repeat('text ', 20) from generate_series(1, 10000) as i`.execute(db);
}

async function signUp(url: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ email: "bench@example.com", password: "correct-horse-battery-staple", name: "Bench" }),
  });
  if (!response.ok) throw new Error(`sign-up failed: ${response.status}`);
  return response.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
}

async function trellis(thread: EmbeddedThread): Promise<Target & { app: any }> {
  const app = new App({ db: embedded({ dataDir: "memory://", thread }), baseUrl: "http://127.0.0.1", onError: () => {} })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("post");
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false });
  await seed(server.app.db);
  return { url: server.url, cookie: await signUp(server.url), app: server.app, close: () => server.close() };
}

/** The same endpoints written by hand: what a careful developer builds without Trellis. */
async function handWritten(): Promise<Target> {
  // The tables come from the same schema (the migration is not what is measured). PGlite runs on
  // the request thread, as an app that creates its own instance has it, and its statements go
  // through PGlite's own `query()` (unnamed, parsed and planned each time): the Kysely dialect sees
  // only PGlite's public statement methods, as with any PGlite dialect for Kysely.
  const database = embedded({ dataDir: "memory://", thread: "main" });
  const setup = await new App({ db: database }).schema(v1).start();
  const instance = database.client;
  const db = new Kysely<any>({
    dialect: new PGliteDialect({
      pglite: {
        query: (text, params) => instance.query(text, params),
        exec: (text) => instance.exec(text),
        transaction: (callback) => instance.transaction(callback),
        close: async () => {},
        closed: false,
        waitReady: instance.waitReady,
      },
    }),
  });
  await seed(db);
  const auth = betterAuth({
    database: { db, type: "postgres" },
    secret: SECRET,
    baseURL: "http://127.0.0.1",
    emailAndPassword: { enabled: true },
    advanced: { database: { validateSchema: false } } as never,
  });
  const columns = ["id", "title", "body", "authorId"] as const;
  const key = z.object({ id: z.number().int() });
  const router = {
    post: {
      list: os.input(z.object({ take: z.number().int().max(100).optional() }).optional()).handler(async ({ input, context }) => {
        const headers = (context as { headers: Headers }).headers;
        if (headers.has("cookie")) await auth.api.getSession({ headers });
        return db.selectFrom("post").select(columns).orderBy("id").limit(input?.take ?? 50).execute();
      }),
      get: os.input(z.object({ where: key })).handler(async ({ input }) => {
        const row = await db.selectFrom("post").select(columns).where("id", "=", input.where.id).executeTakeFirst();
        return row ?? null;
      }),
      create: os.input(z.object({ title: z.string(), body: z.string() })).handler(({ input }) =>
        db.insertInto("post").values(input).returning(columns).executeTakeFirstOrThrow(),
      ),
      update: os.input(z.object({ where: key, data: z.object({ title: z.string() }) })).handler(({ input }) =>
        db.updateTable("post").set(input.data).where("id", "=", input.where.id).returning(columns).executeTakeFirst(),
      ),
      delete: os.input(z.object({ where: key })).handler(({ input }) =>
        db.deleteFrom("post").where("id", "=", input.where.id).returning(columns).executeTakeFirst(),
      ),
    },
  };
  const rpc = new RPCHandler(router);
  const fetchHandler = async (request: Request) => {
    const path = new URL(request.url).pathname;
    if (path === "/health") {
      await sql`select 1`.execute(db);
      return Response.json({ status: "ok", database: "up" });
    }
    if (path.startsWith("/api/auth/")) return auth.handler(request);
    const { matched, response } = await rpc.handle(request, { prefix: "/rpc", context: { headers: request.headers } });
    return matched ? response : new Response("Not found", { status: 404 });
  };
  const server = await new Promise<Server>((resolve) => {
    const created = serveNode({ fetch: fetchHandler, port: 0, hostname: "127.0.0.1" }, () => resolve(created as Server));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    cookie: await signUp(url),
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
      await setup.close();
    },
  };
}

interface Case {
  name: string;
  connections: number;
  request(target: Target): autocannon.Options;
}

const post = (path: string, input: unknown, headers: Record<string, string> = {}) => ({
  method: "POST" as const,
  path,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify({ json: input }),
});

const nextDeleted = new WeakMap<Target, number>();

const CASES: Case[] = [
  { name: "GET /health", connections: 10, request: (t) => ({ url: t.url, requests: [{ method: "GET", path: "/health" }] }) },
  { name: "get by key", connections: 1, request: (t) => ({ url: t.url, requests: [post("/rpc/post/get", { where: { id: 42 } })] }) },
  { name: "get by key", connections: 10, request: (t) => ({ url: t.url, requests: [post("/rpc/post/get", { where: { id: 42 } })] }) },
  { name: "list 20", connections: 1, request: (t) => ({ url: t.url, requests: [post("/rpc/post/list", { take: 20 })] }) },
  { name: "list 20", connections: 10, request: (t) => ({ url: t.url, requests: [post("/rpc/post/list", { take: 20 })] }) },
  { name: "list 20, signed in", connections: 10, request: (t) => ({ url: t.url, requests: [post("/rpc/post/list", { take: 20 }, { cookie: t.cookie, origin: ORIGIN })] }) },
  { name: "create", connections: 1, request: (t) => ({ url: t.url, requests: [post("/rpc/post/create", { title: "new", body: "text" })] }) },
  { name: "update", connections: 1, request: (t) => ({ url: t.url, requests: [post("/rpc/post/update", { where: { id: 7 }, data: { title: "changed" } })] }) },
  {
    name: "delete",
    connections: 1,
    request: (t) => {
      // Each round goes on where the last one stopped on that server: every request deletes a row that exists.
      let id = nextDeleted.get(t) ?? 100;
      return { url: t.url, requests: [{ ...post("/rpc/post/delete", { where: { id } }), setupRequest: (req: any) => (nextDeleted.set(t, id + 1), { ...req, body: JSON.stringify({ json: { where: { id: id++ } } }) }) }] };
    },
  },
];

async function drive(target: Target, entry: Case): Promise<number> {
  const result = await autocannon({ ...entry.request(target), connections: entry.connections, duration: DURATION });
  if (result.non2xx > 0) console.log(`    (${entry.name}: ${result.non2xx} non-2xx answers)`);
  return result.requests.average;
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

/** Which cases run: `BENCH_CASES="get by key (1,list 20 (10"` keeps those whose label starts with one of them. */
const wanted = (entry: Case) =>
  !process.env.BENCH_CASES || process.env.BENCH_CASES.split(",").some((prefix) => `${entry.name} (${entry.connections} conn)`.startsWith(prefix.trim()));

/** Which sides run: `BENCH_THREADS=worker` or `main` for one mode only. */
const THREADS = (process.env.BENCH_THREADS?.split(",") ?? ["worker", "main"]) as EmbeddedThread[];

export async function run(): Promise<void> {
  console.log(`\n## http: Trellis over real HTTP vs a hand-written app on the same stack (${DURATION} s per case and round, ${ROUNDS} alternating rounds, median req/s)`);
  console.log(`  Trellis with the embedded database on its own thread (worker) and on the request thread (main); the hand-written app runs PGlite on its request thread.`);
  // Every server stays up for the whole run and takes its turn on every case, so a change in the
  // machine's load during the run weighs on all sides alike.
  const baseline = await handWritten();
  const ours = new Map<EmbeddedThread, Target & { app: any }>();
  for (const thread of THREADS) ours.set(thread, await trellis(thread));
  const warmUp = (target: Target) => autocannon({ url: target.url, connections: 4, duration: 1, requests: [post("/rpc/post/list", { take: 20 })] });
  await warmUp(baseline);
  for (const target of ours.values()) await warmUp(target);
  const rssBefore = process.memoryUsage().rss;
  for (const entry of CASES.filter(wanted)) {
    const figures = { baseline: [] as number[], ...Object.fromEntries(THREADS.map((thread) => [thread, [] as number[]])) } as Record<string, number[]>;
    for (let round = 0; round < ROUNDS; round++) {
      figures.baseline!.push(await drive(baseline, entry));
      for (const [thread, target] of ours) figures[thread]!.push(await drive(target, entry));
    }
    const b = median(figures.baseline!);
    const sides = THREADS.map((thread) => {
      const a = median(figures[thread]!);
      const ratio = a / b;
      return `${thread} ${a.toFixed(0).padStart(6)} (${ratio.toFixed(2)}${ratio >= 1 ? "" : " BELOW"})`;
    });
    const label = `${entry.name} (${entry.connections} conn)`.padEnd(32);
    console.log(`  ${label} hand-written ${b.toFixed(0).padStart(6)}  trellis ${sides.join("  ")}  (target >= 1.0)`);
  }
  const rssAfter = process.memoryUsage().rss;
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  console.log(`  RSS of the process serving all: ${mb(rssBefore)} -> ${mb(rssAfter)} MB over the run`);
  // With a case filter, only the cases asked for run.
  if (!process.env.BENCH_CASES) for (const [thread, target] of ours) await healthDuringLongQuery(thread, target);
  for (const target of ours.values()) await target.close();
  await baseline.close();
  if (process.env.BENCH_CASES) return;
  await transportLayer();
  await telemetryOverhead();
}

/**
 * The telemetry plugin over real HTTP: the same app left without it (`telemetry: false`, twice:
 * two identical servers show what the machine cannot tell apart), with it and no SDK registered
 * (the default), with `/metrics` on, and with an SDK registered that exports to nothing. Each app
 * serves a raw route and a procedure reading one row of SQLite in memory (so the figures are the
 * request path's, not the embedded database's). Paired rounds: in each round every server takes its
 * turn (in a rotated order), and its cost is its time per request over the baseline's in that round;
 * the median over rounds is reported. `npm run bench -- http:telemetry` runs this alone.
 */
export async function telemetryOverhead(): Promise<void> {
  const body = JSON.stringify({ pong: true });
  const make = (telemetry: AppOptions["telemetry"]) =>
    new App({ db: { dialect: new SqliteDialect({ database: new Database(":memory:") }), kind: "sqlite" }, telemetry })
      .route("GET", "/ping", () => new Response(body, { headers: { "content-type": "application/json" } }))
      .procedure("read", (base) => base.handler(async ({ context }) => (await sql<{ n: number }>`select 1 as n`.execute(context.db)).rows[0]));
  const listen = { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false } as const;
  const servers = {
    off: await serve(make(false), listen),
    offAgain: await serve(make(false), listen),
    noSdk: await serve(make(undefined), listen),
    metrics: await serve(make({ metrics: { token: "bench-token-0123456789" } }), listen),
  };
  const seconds = Number(process.env.BENCH_SECONDS ?? 2);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
  const cases = [
    { name: "GET raw route (10 conn)", connections: 10, requests: [{ method: "GET" as const, path: "/ping" }] },
    { name: "procedure reading a row (10 conn)", connections: 10, requests: [post("/rpc/read", {})] },
  ];
  const driveCase = async (url: string, entry: (typeof cases)[number]) =>
    (await autocannon({ url, connections: entry.connections, duration: seconds, requests: entry.requests })).requests.average;
  console.log(`\n## http: telemetry overhead (${seconds} s per server and round, ${rounds} paired rounds, cost against the server without the plugin: median [middle half])`);
  for (const server of Object.values(servers)) await driveCase(server.url, cases[0]!);
  const run = async (entry: (typeof cases)[number], names: (keyof typeof servers)[]) => {
    const rates = names.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const index = (k + round) % names.length;
        rates[index]!.push(await driveCase(servers[names[index]!].url, entry));
      }
    }
    // Time per request is the inverse of the rate: the cost is the baseline's rate over the candidate's.
    return (name: keyof typeof servers) => {
      const index = names.indexOf(name);
      return { wall: costOf(rates[index]!.map((rate, round) => rates[0]![round]! / rate)), perSecond: median(rates[index]!) };
    };
  };
  for (const entry of cases) {
    const cost = await run(entry, ["off", "offAgain", "noSdk", "metrics"]);
    console.log(costLine(`${entry.name}: without the plugin (a second server)`, cost("offAgain")));
    console.log(costLine(`${entry.name}: no SDK registered`, cost("noSdk"), 2));
    console.log(costLine(`${entry.name}: /metrics on`, cost("metrics"), 3));
  }
  const unregister = registerNoopSdk();
  try {
    for (const entry of cases) console.log(costLine(`${entry.name}: SDK, no-op exporter`, (await run(entry, ["off", "noSdk"]))("noSdk")));
  } finally {
    unregister();
  }
  await Promise.all(Object.values(servers).map((server) => server.close()));
}

/** Parts of this suite that run alone: `npm run bench -- http:telemetry`, `npm run bench -- http:transport`. */
export const cases = { telemetry: telemetryOverhead, transport: () => transportLayer() };

/**
 * `/health` while another request runs a 2-second query: with PGlite on the request thread nothing
 * answers until the query ends; on the database thread the request thread stays free. Target p99 < 50 ms.
 */
async function healthDuringLongQuery(thread: EmbeddedThread, target: Target & { app: any }): Promise<void> {
  // Sized once so that the statement takes about 2 s on this machine.
  const count = (n: number) => sql`select count(*) from generate_series(1, ${n}::int8)`.execute(target.app.db);
  const sample = 2_000_000;
  const t0 = performance.now();
  await count(sample);
  const rows = Math.round((sample * 2000) / Math.max(1, performance.now() - t0));
  // The load starts first, from a worker thread: an in-thread query would stall a load generator on
  // this thread too, and would run before the load began. The query starts 300 ms into it.
  const load = autocannon({ url: target.url, connections: 1, duration: 3, workers: 1, requests: [{ method: "GET", path: "/health" }] });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const t1 = performance.now();
  const took = await count(rows).then(() => performance.now() - t1);
  const result = await load;
  const p99 = result.latency.p99;
  // With one connection only one request can be held by an in-thread query, which p99 alone hides.
  const ok = p99 < 50 && result.latency.max < took / 2 && result.non2xx === 0;
  console.log(
    `  ${`/health during a ${(took / 1000).toFixed(1)} s query (${thread})`.padEnd(40)} p99 ${p99.toFixed(0)} ms, max ${result.latency.max.toFixed(0)} ms, ${result.requests.total} answers, ${result.non2xx} non-2xx (target p99 < 50 ms, no answer held for the query) ${ok ? "OK" : "ABOVE TARGET"}`,
  );
}

/**
 * `serve()` against the bare Node adapter it is built on, both answering the same small Response
 * (a raw route with no context, on an app with no auth): what the transport and the kernel's
 * request path cost on their own. Target >= 0.95.
 */
async function transportLayer(): Promise<void> {
  const body = JSON.stringify({ pong: true });
  const answer = () => new Response(body, { headers: { "content-type": "application/json" } });
  const app = new App({ db: embedded({ dataDir: "memory://" }) }).route("GET", "/ping", answer);
  const ours = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  const bare = await new Promise<Server>((resolve) => {
    const created = serveNode({ fetch: answer, port: 0, hostname: "127.0.0.1" }, () => resolve(created as Server));
  });
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
  const drivePing = async (url: string) =>
    (await autocannon({ url, connections: 10, duration: DURATION, requests: [{ method: "GET", path: "/ping" }] })).requests.average;
  await drivePing(bareUrl);
  await drivePing(ours.url);
  const figures = { ours: [] as number[], bare: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    figures.bare.push(await drivePing(bareUrl));
    figures.ours.push(await drivePing(ours.url));
  }
  const [a, b] = [median(figures.ours), median(figures.bare)];
  const ratio = a / b;
  console.log(`  ${"serve() vs bare adapter (10 conn)".padEnd(32)} trellis ${a.toFixed(0).padStart(6)}  bare adapter ${b.toFixed(0).padStart(6)}  ratio ${ratio.toFixed(2)} (target >= 0.95) ${ratio >= 0.95 ? "OK" : "BELOW TARGET"}`);
  await new Promise((resolve) => bare.close(resolve));
  await ours.close();
}
