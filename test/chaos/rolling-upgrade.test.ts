// A rolling upgrade on PostgreSQL: three replicas serve version 1 under load, two replicas of
// version 2 (an expand step: a new defaulted column, a new table) start at once. Exactly one runs
// the migration (the migrator's lock), the old replicas keep serving, no request gets a 500. Then
// a contract step run by hand (a column renamed) makes the old replicas answer a clear 503 on that
// table, never a 500, while the new ones serve.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App, type BuiltApp } from "../../presets/trellis.js";
import { waitUntil } from "./load.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping the rolling upgrade: DATABASE_URL is not set");

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();
const v2 = schema("2")
  .extend(v1)
  .table("note", (t) => ({ pinned: t.boolean().default(false), text: t.text().nullable() }))
  .table("tag", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .build();

describe.runIf(url)("a rolling upgrade across replicas", () => {
  const schemaName = `rolling_${Date.now().toString(36)}`;
  const pools: pg.Pool[] = [];
  const apps: BuiltApp<any, any>[] = [];
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(statement)).rows;
    } finally {
      await client.end();
    }
  };
  const replica = (version: 1 | 2) => {
    const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schemaName}` });
    pools.push(pool);
    const app: App<any, any, any> = new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres" }, onError: () => {} }).schema(v1);
    const upgraded: any = version === 2 ? app.schema(v2).resource("tag") : app;
    return upgraded.resource("note") as App<any, any, any>;
  };
  const call = async (app: BuiltApp<any, any>, path: string, input: unknown) => {
    const response = await app.handle(new Request(`http://localhost/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) }));
    return { status: response.status, body: (await response.json()).json };
  };

  beforeAll(async () => {
    await admin(`create schema ${schemaName}`);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await Promise.all(pools.filter((pool) => !pool.ended).map((pool) => pool.end()));
    await admin(`drop schema if exists ${schemaName} cascade`);
  });

  it("one new replica migrates, the old ones keep serving, a contract step is a clear 503 on the old ones", async () => {
    const old: BuiltApp<any, any>[] = await Promise.all([replica(1).start(), replica(1).start(), replica(1).start()]);
    apps.push(...old);
    const statuses: Record<number, number> = {};
    const unexpected: string[] = [];
    let running = true;
    let turn = 0;
    const load = (async () => {
      while (running) {
        const app = old[turn++ % old.length]!;
        for (const answer of [await call(app, "note/create", { body: `n${turn}` }), await call(app, "note/list", { take: 3 })]) {
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          if (answer.status !== 200) unexpected.push(`${answer.status} ${JSON.stringify(answer.body)}`);
        }
      }
    })();

    const fresh: BuiltApp<any, any>[] = await Promise.all([replica(2).start(), replica(2).start()]);
    apps.push(...fresh);
    const applied = fresh.map((app) => app.overview().schema.applied);
    const history = await admin(`select name from ${schemaName}.kysely_migration order by name`);
    // The old replicas go on serving while and after the new ones migrate.
    const before = statuses[200] ?? 0;
    await waitUntil(() => (statuses[200] ?? 0) >= before + 20, 30_000, "20 more 200s from the old replicas after the new ones migrated");
    running = false;
    await load;
    console.log(`expand: applied by each new replica ${JSON.stringify(applied)}; old replicas under load ${JSON.stringify(statuses)}`);
    expect(applied.filter((list) => list?.includes("0002_2"))).toHaveLength(1);
    expect(history.map((row) => row.name)).toEqual(["0001_1", "0002_2"]);
    expect(unexpected).toEqual([]);
    // New replicas see the new column (defaulted on rows the old ones wrote) and the new table.
    const listed = await call(fresh[0]!, "note/list", { take: 1 });
    expect(listed.status).toBe(200);
    expect(listed.body[0]).toMatchObject({ pinned: false });
    expect((await call(fresh[1]!, "tag/create", { name: "new" })).status).toBe(200);

    // Contract, by hand, once no replica of the new version reads the old column: here it is
    // renamed while old replicas still run, the case the pattern exists to avoid.
    await admin(`alter table ${schemaName}.note rename column body to body_old`);
    const refused = await call(old[0]!, "note/list", {});
    console.log(`contract while old replicas run: ${refused.status} "${refused.body.message}"`);
    expect(refused).toMatchObject({ status: 503, body: { code: "SERVICE_UNAVAILABLE", message: expect.stringMatching(/schema/) } });
    expect((await call(old[1]!, "note/create", { body: "x" })).status).toBe(503);
    expect((await call(fresh[0]!, "tag/list", {})).status).toBe(200);
  }, 90_000); // its named waits (10-30 s each) fail first; a loaded machine needs more than the default 30 s
});
