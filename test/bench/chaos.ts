/**
 * `npm run bench -- chaos`: PostgreSQL going away again and again under steady mixed load through
 * `serve()`. Each cycle cuts the server off (a relay in front of it: connections reset, new ones
 * refused) for `CHAOS_DOWN_MS` (1,000), then restores it, and measures how long the 503s took and
 * how long until writes succeed again; at the end every acknowledged write must be in the database.
 * Runs `CHAOS_SECONDS` (60). With `CHAOS_RESTART=1`, one more cycle restarts the real server
 * (`pg_ctlcluster <version> main restart`): only on a machine whose PostgreSQL is yours alone.
 */
import { execSync } from "node:child_process";
import pg from "pg";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { tcpRelay } from "../support/tcp-relay.js";
import { sleep, steadyLoad, waitUntil } from "../chaos/load.js";
import { objectStoreCycles, redisCycles } from "./chaos-stores.js";

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

export async function run(): Promise<void> {
  const cycles = { seconds: Number(process.env.CHAOS_SECONDS ?? 60), downMs: Number(process.env.CHAOS_DOWN_MS ?? 1000) };
  await postgresCycles(cycles);
  await redisCycles(cycles);
  await objectStoreCycles(cycles);
}

async function postgresCycles({ seconds, downMs }: { seconds: number; downMs: number }): Promise<void> {
  const url = process.env.DATABASE_URL;
  console.log("\n## chaos: PostgreSQL going away under load");
  if (!url) return console.log("skipped: DATABASE_URL is not set");
  const schemaName = `bench_chaos_${Date.now().toString(36)}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(statement)).rows;
    } finally {
      await client.end();
    }
  };
  await admin(`create schema ${schemaName}`);
  const target = new URL(url);
  const relay = await tcpRelay(target.hostname, Number(target.port || 5432));
  const through = new URL(url);
  through.hostname = "127.0.0.1";
  through.port = String(relay.port);
  const pool = new pg.Pool({ connectionString: through.toString(), max: 4, options: `-c search_path=${schemaName}`, connectionTimeoutMillis: 1000 });
  const app = new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres", live: postgresLive({ pool }) }, onError: () => {} })
    .schema(v1)
    .resource("note", { live: true })
    .openapi();
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  const load = steadyLoad(server.url, { workers: 4 });
  const rows: string[] = [];
  const ends = Date.now() + seconds * 1000;
  try {
    await waitUntil(() => load.report.acknowledged.length > 50, 30_000, "load warming up");
    for (let cycle = 1; Date.now() < ends; cycle++) {
      const before503 = load.report.statuses[503] ?? 0;
      await relay.cut();
      await sleep(downMs);
      await relay.restore();
      const acknowledged = load.report.acknowledged.length;
      const recoverMs = await waitUntil(() => load.report.acknowledged.length > acknowledged + 5, 30_000, "writes after the outage");
      rows.push(`| ${cycle} | cut ${downMs} ms | ${(load.report.statuses[503] ?? 0) - before503} | ${recoverMs} |`);
      await sleep(2000);
    }
    if (process.env.CHAOS_RESTART === "1") {
      const version = execSync("pg_lsclusters -h | awk '{print $1}' | head -1").toString().trim();
      const before503 = load.report.statuses[503] ?? 0;
      const acknowledged = load.report.acknowledged.length;
      execSync(`pg_ctlcluster ${version} main restart`);
      const recoverMs = await waitUntil(() => load.report.acknowledged.length > acknowledged + 5, 60_000, "writes after the restart");
      rows.push(`| restart | pg_ctlcluster ${version} main restart | ${(load.report.statuses[503] ?? 0) - before503} | ${recoverMs} |`);
    }
  } finally {
    const report = await load.stop();
    const stored = new Set((await admin(`select id from ${schemaName}.note`)).map((row) => row.id as number));
    const lost = report.acknowledged.filter((id) => !stored.has(id)).length;
    console.log("| cycle | outage | 503s during it | writes again after (ms) |\n| --- | --- | --- | --- |");
    for (const row of rows) console.log(row);
    console.log(`\nstatuses ${JSON.stringify(report.statuses)}; slowest 503 ${report.slowest503} ms; unexpected answers ${report.unexpected.length}${report.unexpected.length ? ` (first: ${report.unexpected[0]})` : ""}; acknowledged writes ${report.acknowledged.length}, lost ${lost}`);
    if (report.unexpected.length || lost) process.exitCode = 1;
    await server.close();
    if (!pool.ended) await pool.end();
    await relay.close();
    await admin(`drop schema if exists ${schemaName} cascade`);
  }
}
