// PostgreSQL going away under steady load through serve(): its connections killed, then the server
// unreachable for a second (a relay in front of it cut and restored: the shared server is never
// restarted here; `npm run bench -- chaos` can restart a real one). 503s that say why, never a 500,
// recovery without restarting the app, live streams resumed, no acknowledged write lost.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import type { Logger } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { within } from "../support/within.js";
import { tcpRelay, type TcpRelay } from "../support/tcp-relay.js";
import { sleep, steadyLoad, waitUntil } from "./load.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping PostgreSQL chaos: DATABASE_URL is not set");

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.runIf(url)("PostgreSQL chaos under load", () => {
  const schemaName = `chaos_${Date.now().toString(36)}`;
  const applicationName = `trellis_${schemaName}`;
  let relay: TcpRelay;
  let pool: pg.Pool;
  let server: RunningServer;
  const admin = () => new pg.Client({ connectionString: url });
  /** How long the app took over each 503 it answered, from its request lines. */
  const served503: number[] = [];
  const record = (fields: object | string) => {
    if (typeof fields === "object" && (fields as { status?: number }).status === 503) served503.push((fields as { durationMs: number }).durationMs);
  };
  const logger: Logger = { info: record, warn: record, error: record, child: () => logger };

  beforeAll(async () => {
    const client = admin();
    await client.connect();
    await client.query(`create schema ${schemaName}`);
    await client.end();
    const target = new URL(url!);
    relay = await tcpRelay(target.hostname, Number(target.port || 5432));
    const through = new URL(url!);
    through.hostname = "127.0.0.1";
    through.port = String(relay.port);
    pool = new pg.Pool({ connectionString: through.toString(), max: 4, application_name: applicationName, options: `-c search_path=${schemaName}`, connectionTimeoutMillis: 1000 });
    pool.on("error", () => {}); // an idle client losing its server: the pool drops it
    const app = new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres", live: postgresLive({ pool }) }, onError: () => {}, logger })
      .schema(v1)
      .resource("note", { live: true })
      .openapi();
    server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  });

  // Each step bounded and named: a connection the app leaked shows as the step that waits for it.
  afterAll(async () => {
    if (server) await within(server.close(), 20_000, "the server's close()");
    if (pool && !pool.ended) await within(pool.end(), 10_000, "the pool's end() (a connection not released)");
    if (relay) await within(relay.close(), 5_000, "the relay's close()");
    const client = admin();
    await client.connect();
    await within(client.query(`drop schema if exists ${schemaName} cascade`), 15_000, `dropping ${schemaName} (a lock held by a connection left open)`).finally(() => client.end());
  });

  const rowIds = async () => {
    const client = admin();
    await client.connect();
    try {
      const { rows } = await client.query(`select id from ${schemaName}.note`);
      return new Set(rows.map((row) => row.id as number));
    } finally {
      await client.end();
    }
  };

  it("its connections killed: no 500, the app keeps serving, no acknowledged write lost", async () => {
    const load = steadyLoad(server.url);
    await waitUntil(() => load.report.acknowledged.length > 20);
    const killer = admin();
    await killer.connect();
    const { rows } = await killer.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [applicationName]);
    await killer.end();
    const before = load.report.acknowledged.length;
    const recovered = await waitUntil(() => load.report.acknowledged.length > before + 20, 10_000, "writes after the kill");
    const report = await load.stop();
    console.log(`killed ${rows.length} connections; statuses ${JSON.stringify(report.statuses)}; writing again after ${recovered} ms`);
    expect(rows.length).toBeGreaterThan(0);
    expect(report.unexpected).toEqual([]);
    const stored = await rowIds();
    expect(report.acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  }, 90_000); // its named waits (10-30 s each) fail first; a loaded machine needs more than the default 30 s

  it("unreachable for a second: 503 with a clear message in under a second, /health down, then recovery and a fresh live snapshot", async () => {
    const client = createClient<any>({ url: server.url }) as any;
    const controller = new AbortController();
    const stream = (await client.note.live({ orderBy: [{ id: "desc" }], take: 5 }, { signal: controller.signal })) as AsyncIterable<{ id: number }[]>;
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const load = steadyLoad(server.url);
    await waitUntil(() => load.report.acknowledged.length > 10);
    served503.length = 0;
    await relay.cut();
    const down = Date.now();
    await waitUntil(() => (load.report.statuses[503] ?? 0) > 5, 5000, "503s while PostgreSQL is unreachable");
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: "error", database: "down" });
    await sleep(Math.max(0, 1000 - (Date.now() - down)));
    await relay.restore();
    const before = load.report.acknowledged.length;
    const recovered = await waitUntil(() => load.report.acknowledged.length > before + 10, 10_000, "writes after PostgreSQL came back");
    const report = await load.stop();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const slowestServed = Math.max(...served503);
    console.log(`unreachable ~1 s; statuses ${JSON.stringify(report.statuses)}; slowest 503 ${slowestServed} ms in the app (${report.slowest503} ms as the load's client saw it); writing again ${recovered} ms after restore; messages ${[...report.messages].join(" | ")}`);
    expect(report.unexpected).toEqual([]);
    // The app's own time for each 503, from its request lines: the load's clients share this
    // process, so their times include waiting on their own event loop, which a loaded machine stretches.
    expect(served503.length).toBeGreaterThan(5);
    expect(slowestServed).toBeLessThan(1000);
    expect([...report.messages].every((message) => /database/i.test(message))).toBe(true);
    const stored = await rowIds();
    expect(report.acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    // The stream outlived the outage, and its next snapshots hold a row written after it.
    try {
      const created = await client.note.create({ body: "after the outage" });
      const next = () => Promise.race([iterator.next(), sleep(5000).then(() => ({ value: [] }))]);
      await waitUntil(async () => ((await next()).value as { id: number }[]).some((row) => row.id === created.id), 10_000, "a live snapshot with the new row");
    } finally {
      controller.abort();
    }
  }, 90_000); // its named waits (10-30 s each) fail first; a loaded machine needs more than the default 30 s
});
