import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { backupEmbedded } from "../../kernel/embedded/backup.js";
import { embedded, restoreEmbedded, type EmbeddedClient } from "../../kernel/embedded/index.js";
import { pgDumpSource } from "../../plugins/backups/source.js";

/**
 * `npm run bench -- backups`: one backup of N rows (200 bytes each) while a writer inserts one row
 * at a time, by each way there is: the embedded data directory read and gzipped inside PGlite's
 * lock (`dumpDataDir("gzip")`, the baseline), read inside it and gzipped after (what
 * `backup()` does), on the request thread and on the database thread; and `pg_dump` on
 * PostgreSQL when DATABASE_URL is set. Prints time, size, the longest gap between two writes meanwhile,
 * and the restore's time. `BACKUP_ROWS` changes N (default 20000,100000).
 */
export async function run(): Promise<void> {
  const counts = (process.env.BACKUP_ROWS ?? "20000,100000").split(",").map(Number);
  const dir = mkdtempSync(join(tmpdir(), "trellis-backups-bench-"));
  console.log("\n## Backups (one backup under a steady writer; figures from this machine, shared and noisy)");
  console.log(`  ${"way".padEnd(46)} ${"rows".padStart(7)} ${"time".padStart(8)} ${"size".padStart(9)} ${"write stall".padStart(14)} ${"restore".padStart(8)}`);
  try {
    for (const rows of counts) {
      await embeddedWay(dir, rows, "main", "data directory, gzip inside the lock (baseline)", (client) => client.dumpDataDir("gzip").then(async (blob) => new Uint8Array(await blob.arrayBuffer())));
      await embeddedWay(dir, rows, "main", "data directory, gzip after the lock, request thread", (client) => backupEmbedded(client));
      await embeddedWay(dir, rows, "worker", "data directory, gzip after the lock, database thread", undefined);
      await postgresWay(dir, rows);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function line(way: string, rows: number, ms: number, bytes: number, longestWrite: number, restoreMs: number | undefined): void {
  const mb = `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(`  ${way.padEnd(46)} ${String(rows).padStart(7)} ${`${ms} ms`.padStart(8)} ${mb.padStart(9)} ${`${longestWrite.toFixed(0)} ms`.padStart(14)} ${restoreMs === undefined ? "" : `${restoreMs} ms`.padStart(8)}`);
}

/**
 * Runs `backup` while one writer inserts row after row; the longest gap between two acknowledged
 * inserts meanwhile (so a blocked event loop counts, not only a wait for PGlite's lock).
 */
async function underWriter<T>(insert: () => Promise<unknown>, backup: () => Promise<T>): Promise<{ result: T; ms: number; longestWrite: number }> {
  let running = true;
  let longestWrite = 0;
  let last = performance.now();
  const writer = (async () => {
    while (running) {
      await insert();
      const now = performance.now();
      longestWrite = Math.max(longestWrite, now - last);
      last = now;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 200));
  longestWrite = 0;
  const started = Date.now();
  const result = await backup();
  const ms = Date.now() - started;
  running = false;
  await writer;
  // A stall that ends with the backup shows as the gap up to the first write after it.
  return { result, ms, longestWrite };
}

async function embeddedWay(dir: string, rows: number, thread: "main" | "worker", way: string, take: ((client: EmbeddedClient) => Promise<Uint8Array>) | undefined): Promise<void> {
  const dataDir = join(dir, `${thread}-${rows}-${Math.random().toString(36).slice(2)}`);
  const database = embedded({ dataDir, thread });
  await database.ready();
  await database.client.exec(`create table note (id serial primary key, body text); insert into note (body) select repeat('x', 200) from generate_series(1, ${rows})`);
  const { result, ms, longestWrite } = await underWriter(
    () => database.client.query("insert into note (body) values ($1)", ["y".repeat(200)]),
    () => (take ? take(database.client as EmbeddedClient) : database.backup()),
  );
  await database.close();
  const target = join(dir, `restored-${Math.random().toString(36).slice(2)}`);
  const started = Date.now();
  await restoreEmbedded(result, target);
  line(way, rows, ms, result.byteLength, longestWrite, Date.now() - started);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(target, { recursive: true, force: true });
}

async function postgresWay(dir: string, rows: number): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url || spawnSync("pg_dump", ["--version"]).status !== 0) return console.log(`  pg_dump: skipped (${url ? "pg_dump is not installed" : "DATABASE_URL is not set"})`);
  const names = [`trellis_bench_backup_${process.pid}`, `trellis_bench_restore_${process.pid}`];
  const at = (name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();
  const server = new pg.Client({ connectionString: url });
  await server.connect();
  for (const name of names) await server.query(`drop database if exists ${name} with (force)`).then(() => server.query(`create database ${name}`));
  const client = new pg.Client({ connectionString: at(names[0]!) });
  await client.connect();
  try {
    await client.query(`create table note (id serial primary key, body text); insert into note (body) select repeat('x', 200) from generate_series(1, ${rows})`);
    const { result, ms, longestWrite } = await underWriter(() => client.query("insert into note (body) values ($1)", ["y".repeat(200)]), async () => new Uint8Array(await new Response(await pgDumpSource(at(names[0]!)).take(new AbortController().signal)).arrayBuffer()));
    const file = join(dir, "bench.dump");
    writeFileSync(file, result);
    const started = Date.now();
    spawnSync("pg_restore", [`--dbname=${at(names[1]!)}`, file]);
    line("PostgreSQL, pg_dump --format=custom", rows, ms, result.byteLength, longestWrite, Date.now() - started);
  } finally {
    await client.end();
    for (const name of names) await server.query(`drop database if exists ${name} with (force)`);
    await server.end();
  }
}
