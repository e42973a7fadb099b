/**
 * PostgreSQL live queries LISTEN on one connection taken from the app's pool, and take a new one
 * when it drops. A connection whose LISTEN failed (the server going away between the connect and
 * the LISTEN) was never given back: each failed attempt kept one checked out, so the pool ran dry
 * for requests, and `close()` hung for good in the pool's `end()`, which waits for every client.
 */
import pg from "pg";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { tcpRelay, type TcpRelay } from "../support/tcp-relay.js";
import { sleep, waitUntil } from "../chaos/load.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping the LISTEN failure case: DATABASE_URL is not set");

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.runIf(url)("a live listener whose LISTEN fails", () => {
  const schemaName = `t_listen_${randomBytes(4).toString("hex")}`;
  const applicationName = `trellis_${schemaName}`;
  const admin = new pg.Client({ connectionString: url });
  let relay: TcpRelay;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create schema ${schemaName}`);
    const target = new URL(url!);
    relay = await tcpRelay(target.hostname, Number(target.port || 5432));
  });
  afterAll(async () => {
    await relay?.close();
    await admin.query(`drop schema if exists ${schemaName} cascade`);
    await admin.end();
  });

  it("gives the connection back, keeps the pool serving, and closes", async () => {
    const through = new URL(url!);
    through.hostname = "127.0.0.1";
    through.port = String(relay.port);
    const pool = new pg.Pool({ connectionString: through.toString(), max: 3, application_name: applicationName, options: `-c search_path=${schemaName}`, connectionTimeoutMillis: 2000 });
    pool.on("error", () => {});
    const app = await new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres", live: postgresLive({ pool }) }, onError: () => {} })
      .schema(v1)
      .resource("note", { live: true })
      .start();
    const create = (body: string) =>
      app.handle(new Request("http://local/rpc/note/create", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { body } }) }));
    try {
      // Every LISTEN from now on loses its connection; then the listener's connection is dropped.
      relay.resetWhen((chunk) => chunk.includes("LISTEN"));
      const { rows } = await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and query like 'LISTEN%'", [applicationName]);
      expect(rows.length).toBe(1);
      // Retries at 100, 200, 400, 800 ms: more failed attempts than the pool has connections.
      await sleep(2000);
      expect(pool.totalCount - pool.idleCount).toBe(0);
      expect((await create("while the listener retries")).status).toBe(200);
      relay.resetWhen(undefined);
      await waitUntil(async () => (await admin.query("select 1 from pg_stat_activity where application_name = $1 and query like 'LISTEN%'", [applicationName])).rows.length === 1, 10_000, "the listener back");
      expect((await create("after")).status).toBe(200);
    } finally {
      const closed = await Promise.race([app.close().then(() => "closed"), sleep(10_000).then(() => "still closing after 10 s")]);
      expect(closed).toBe("closed");
    }
  }, 30_000);
});
