import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { openDatabase } from "../support/databases.js";
import { nextSnapshot as next } from "../support/snapshots.js";

const v1 = schema("1").table("msg", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();
const url = process.env.DATABASE_URL;
if (!url) console.log("skipping live replica tests: DATABASE_URL is not set");


describe.runIf(url)("live queries across PostgreSQL replicas", () => {
  const schemaName = `live_${Date.now().toString(36)}`;
  const pools: pg.Pool[] = [];
  let servers: RunningServer[] = [];

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schemaName}`);
    await admin.end();
    const replica = () => {
      const pool = new pg.Pool({ connectionString: url, max: 3, options: `-c search_path=${schemaName}` });
      pools.push(pool);
      return new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres", live: postgresLive({ pool }) } })
        .schema(v1)
        .resource("msg", { live: true });
    };
    // Two replicas migrating at once: the migration and the triggers run once.
    servers = await Promise.all([serve(replica(), { port: 0, handleSignals: false }), serve(replica(), { port: 0, handleSignals: false })]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`drop schema if exists ${schemaName} cascade`);
    await admin.end();
  });

  it("a subscriber on one replica sees a write made on the other, through the typed client over SSE", async () => {
    const [a, b] = servers;
    const client = (createClient<any>({ url: a!.url }) as any);
    const controller = new AbortController();
    const stream = await client.msg.live({}, { signal: controller.signal });
    expect((await next(stream)).value).toEqual([]);

    await (createClient<any>({ url: b!.url }) as any).msg.create({ body: "from b" });
    expect((await next(stream)).value).toMatchObject([{ body: "from b" }]);

    // A write made by anyone, outside Trellis, reaches it too.
    await pools[1]!.query("insert into msg (body) values ('raw sql')");
    expect((await next(stream)).value).toMatchObject([{ body: "from b" }, { body: "raw sql" }]);
    controller.abort();
  });
});

describe("live through a real port on the embedded database", () => {
  let server: RunningServer;
  beforeAll(async () => {
    const database = await openDatabase("pglite");
    server = await serve(new App({ db: { dialect: database.dialect, kind: "postgres", live: { kind: "pglite" }, close: database.close } }).schema(v1).resource("msg", { live: true }), {
      port: 0,
      handleSignals: false,
    });
  });
  afterAll(() => server.close());

  it("streams to the typed client over SSE and answers a 4xx before the stream starts", async () => {
    const client = (createClient<any>({ url: server.url }) as any);
    const stream = await client.msg.live({ take: 2, orderBy: [{ id: "desc" }] });
    expect((await next(stream)).value).toEqual([]);
    await client.msg.create({ body: "one" });
    expect((await next(stream)).value).toMatchObject([{ body: "one" }]);
    await stream.return();

    const response = await fetch(`${server.url}/rpc/msg/live`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { take: 1000 } }) });
    expect(response.status).toBe(400);
  });
});
