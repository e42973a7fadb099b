/**
 * The long chaos cases for the stores beside the database (`npm run bench -- chaos`): Redis and the
 * S3 server each stopped and started again, cycle after cycle, under steady mixed load through
 * `serve()`. Each cycle prints what callers got while the store was away and how long until the
 * app answered as before; at the end, no answer may have been a 500 and no file row may lack its
 * bytes.
 */
import { Redis } from "ioredis";
import { redisRateLimitStore, redisSecondaryStorage } from "../../kernel/redis/index.js";
import { serve } from "../../presets/node.js";
import { App } from "../../presets/trellis.js";
import { schema } from "../../kernel/schema/index.js";
import { openDatabase } from "../support/databases.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { ownRedis, redisServerMissing } from "../support/redis-server.js";
import { startObjectStore } from "../support/object-store.js";
import { bytes, filesApp, uploadForm } from "../files/fixture.js";
import { sleep, steadyLoad, waitUntil, type LoadReport } from "../chaos/load.js";

const SECRET = "a-bench-secret-that-is-long-enough-1234567890";
const notes = schema("1").auth().table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

interface Cycles {
  seconds: number;
  downMs: number;
}

const header = "| cycle | 503s while down | other answers while down | answering as before after (ms) |\n| --- | --- | --- | --- |";

function summary(report: LoadReport, extra = ""): string {
  return `statuses ${JSON.stringify(report.statuses)}; unexpected answers ${report.unexpected.length}${report.unexpected.length ? ` (first: ${report.unexpected[0]})` : ""}${extra}`;
}

/** Redis stopped and started, with the rate limit failing closed (503s) and sessions kept in the database too. */
export async function redisCycles({ seconds, downMs }: Cycles): Promise<void> {
  console.log("\n## chaos: Redis going away under load (rate limit failing closed, sessions in Redis and the database)");
  const missing = redisServerMissing();
  if (missing) return console.log(`skipped: ${missing}`);
  const redis = await ownRedis();
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on("error", () => {});
  const database = await openDatabase("sqlite");
  const app = new App({
    db: database,
    baseUrl: ORIGIN,
    onError: () => {},
    rateLimit: { max: 1_000_000, windowMs: 60_000, store: redisRateLimitStore(client, { timeoutMs: 200 }), onStoreError: "closed" },
  })
    .schema(notes)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true }, secondaryStorage: redisSecondaryStorage(client, { timeoutMs: 200 }), session: { storeSessionInDatabase: true } })
    .resource("note", { permissions: { list: "authenticated", create: "authenticated" } })
    .openapi();
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  const { cookie } = await signUp(server.app, "chaos@example.com");
  const load = steadyLoad(server.url, { workers: 4, headers: { cookie, origin: ORIGIN } });
  const rows: string[] = [];
  try {
    await waitUntil(() => load.report.acknowledged.length > 50, 30_000, "load warming up");
    const ends = Date.now() + seconds * 1000;
    for (let cycle = 1; Date.now() < ends; cycle++) {
      const before = { ...load.report.statuses };
      await redis.stop();
      await sleep(downMs);
      const during = diff(before, load.report.statuses);
      await redis.start();
      const acknowledged = load.report.acknowledged.length;
      const recoverMs = await waitUntil(() => load.report.acknowledged.length > acknowledged + 5, 30_000, "writes after Redis came back");
      rows.push(`| ${cycle} | ${during[503] ?? 0} | ${JSON.stringify({ ...during, 503: undefined })} | ${recoverMs} |`);
      await sleep(2000);
    }
  } finally {
    const report = await load.stop();
    console.log(header);
    for (const row of rows) console.log(row);
    console.log(`\n${summary(report)}`);
    if (report.unexpected.length) process.exitCode = 1;
    await server.close();
    await database.close();
    client.disconnect();
    await redis.stop();
  }
}

/** The S3 server stopped and started under a load of uploads, downloads and table writes. */
export async function objectStoreCycles({ seconds, downMs }: Cycles): Promise<void> {
  console.log("\n## chaos: the S3 server going away under load (uploads, downloads, table writes)");
  const store = await startObjectStore("trellis-bench-chaos");
  if ("skipped" in store) return console.log(`skipped: ${store.skipped}`);
  const database = await openDatabase("sqlite");
  const server = await serve(filesApp(database, { storage: store.storage }), { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  const { cookie } = await signUp(server.app, "chaos@example.com");
  const load = steadyLoad(server.url, { table: "post", read: "rpc", workers: 2, headers: { cookie }, row: (n) => ({ title: `load ${n}` }) });
  // Two loops of uploads, each followed by a download of what it stored.
  const files = { statuses: {} as Record<number, number>, unexpected: [] as string[], stored: [] as string[] };
  let running = true;
  const count = (status: number) => (files.statuses[status] = (files.statuses[status] ?? 0) + 1);
  const uploader = async () => {
    while (running) {
      try {
        const response = await fetch(`${server.url}/rpc/file/upload`, { method: "POST", headers: { cookie }, body: uploadForm(new Blob([bytes(8192)], { type: "image/png" }), "chaos.png") });
        count(response.status);
        const body = await response.json();
        if (response.status === 200) {
          files.stored.push(body.json.id);
          const download = await fetch(`${server.url}/files/${body.json.id}`, { headers: { cookie } });
          count(download.status);
          await download.arrayBuffer();
          if (download.status !== 200 && download.status !== 503) files.unexpected.push(`download ${download.status}`);
        } else if (response.status !== 503) files.unexpected.push(`upload ${response.status} ${JSON.stringify(body)}`);
      } catch (error) {
        files.unexpected.push(`fetch failed: ${(error as Error).message}`);
      }
    }
  };
  const uploaders = [uploader(), uploader()];
  const rows: string[] = [];
  try {
    await waitUntil(() => files.stored.length > 10 && load.report.acknowledged.length > 10, 30_000, "load warming up");
    const ends = Date.now() + seconds * 1000;
    for (let cycle = 1; Date.now() < ends; cycle++) {
      const before = { ...files.statuses };
      const tableBefore = { ...load.report.statuses };
      await store.stop();
      await sleep(downMs);
      const during = diff(before, files.statuses);
      const tableDuring = diff(tableBefore, load.report.statuses);
      await store.start();
      const stored = files.stored.length;
      const recoverMs = await waitUntil(() => files.stored.length > stored + 2, 30_000, "uploads after the store came back");
      rows.push(`| ${cycle} | ${during[503] ?? 0} | files ${JSON.stringify({ ...during, 503: undefined })}, table ${JSON.stringify(tableDuring)} | ${recoverMs} |`);
      await sleep(2000);
    }
  } finally {
    running = false;
    await Promise.all(uploaders);
    const report = await load.stop();
    // Every file row the app lists must have its bytes.
    let missing = 0;
    for (const id of files.stored) {
      const response = await fetch(`${server.url}/files/${id}`, { headers: { cookie } });
      if (response.status !== 200) missing++;
      await response.arrayBuffer();
    }
    console.log(header);
    for (const row of rows) console.log(row);
    console.log(`\ntable load: ${summary(report)}`);
    console.log(`files: statuses ${JSON.stringify(files.statuses)}; unexpected ${files.unexpected.length}${files.unexpected.length ? ` (first: ${files.unexpected[0]})` : ""}; uploads acknowledged ${files.stored.length}, without their bytes ${missing}`);
    if (report.unexpected.length || files.unexpected.length || missing) process.exitCode = 1;
    await server.close();
    await database.close();
    await store.close();
  }
}

function diff(before: Record<number, number>, after: Record<number, number>): Record<number, number> {
  const changed: Record<number, number> = {};
  for (const [status, count] of Object.entries(after)) {
    const delta = count - (before[Number(status)] ?? 0);
    if (delta) changed[Number(status)] = delta;
  }
  return changed;
}
