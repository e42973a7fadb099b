import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { dropSchema, sleep, waitFor } from "./support.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping the jobs replica tests: DATABASE_URL is not set");

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();
const JOBS = 300;

describe.runIf(url)("jobs on three replicas of one PostgreSQL schema", () => {
  const appSchema = `jobs_${randomBytes(5).toString("hex")}`;
  const jobsSchema = `${appSchema}_jobs`;
  const handled: { replica: number; n: number }[] = [];
  const ticks: { replica: number; at: number; data: unknown }[] = [];
  const replicas: any[] = [];

  const replica = (index: number) => {
    const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${appSchema}` });
    return new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres" } })
      .schema(v1)
      .jobs({ schema: jobsSchema, pollingInterval: 0.5, cronInterval: 1 })
      .job("count", { concurrency: 5 }, ({ data }) => void handled.push({ replica: index, n: (data as { n: number }).n }))
      .cron("tick", "* * * * *", ({ data }) => void ticks.push({ replica: index, at: Date.now(), data }))
      .build();
  };

  beforeAll(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`create schema ${appSchema}`);
    await client.end();
    // One replica installs the engine's schema, then the others join it.
    replicas.push(replica(0));
    await replicas[0].migrator.migrateToLatest();
    replicas.push(replica(1), replica(2));
    await Promise.all(replicas.slice(1).map((r) => r.ready()));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await dropSchema(appSchema);
    await dropSchema(jobsSchema);
  });

  it(`${JOBS} jobs sent from every replica are each handled exactly once`, async () => {
    const sends = Array.from({ length: JOBS }, (_, n) => replicas[n % 3].sealed.service("jobs").send("count", { n }));
    await Promise.all(sends);
    await waitFor(`${JOBS} handled`, () => handled.length >= JOBS, 30_000);
    await sleep(1000);
    const numbers = handled.map(({ n }) => n).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: JOBS }, (_, n) => n));
    expect(new Set(handled.map(({ replica }) => replica)).size).toBeGreaterThan(1);
  }, 45_000);

  it("a cron tick runs once although three replicas check the schedule every second", async () => {
    // The tick is the minute: keep the observation inside one minute so exactly one run is right.
    if (new Date().getSeconds() > 50) await sleep((61 - new Date().getSeconds()) * 1000);
    const start = Date.now();
    await waitFor("the first tick", () => ticks.length >= 1, 15_000);
    await sleep(4000);
    const minutes = ticks.map(({ at }) => Math.floor(at / 60_000));
    // At most one run per minute (tick), whichever replica ran it.
    expect(new Set(minutes).size).toBe(minutes.length);
    expect(ticks.filter(({ at }) => at >= start).length).toBeLessThanOrEqual(1);
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks[0]!.data).toBeUndefined();
  }, 45_000);
});
