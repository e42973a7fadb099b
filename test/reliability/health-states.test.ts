import Database from "better-sqlite3";
import pg from "pg";
import { SqliteDialect } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { postgresDialect } from "../../kernel/db/dialect/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, request, rpc } from "../support/app.js";
import { gatedDialect } from "./gated-dialect.js";
import { reopenable } from "./reopenable.js";
import { families } from "../support/databases.js";

const build = closeAfterEach();
const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();
const DOWN = { status: 503, body: { status: "error", database: "down" } };

/** `/health` and an ordinary procedure, timed. */
async function probe(app: { handle(request: Request): Promise<Response> }) {
  const started = Date.now();
  const health = await request(app, "GET", "/health");
  return { health, ms: Date.now() - started };
}

describe("/health answers in every state", () => {
  it("while the database is still starting: 503 within the probe's timeout, then 200 once it is up", async () => {
    const gated = gatedDialect(new SqliteDialect({ database: new Database(":memory:") }));
    const app = build(new App({ db: { dialect: gated.dialect, kind: "sqlite" }, health: { timeoutMs: 200 }, onError: () => {} }).schema(v1).resource("item"));
    const { health, ms } = await probe(app);
    expect(health).toMatchObject(DOWN);
    expect(ms).toBeLessThan(1500);
    const waiting = rpc(app, "item.list", {});
    gated.open();
    // Set up now, but not migrated: 503 "starting", never a missing table.
    expect((await waiting).body).toMatchObject({ code: "SERVICE_UNAVAILABLE", message: expect.stringContaining("starting") });
    expect(await request(app, "GET", "/health")).toMatchObject({ status: 503, body: { status: "starting", database: "up" } });
    await app.migrator.migrateToLatest();
    expect(await request(app, "GET", "/health")).toMatchObject({ status: 200, body: { status: "ok", database: "up" } });
  });

  it("after setup failed (database unreachable at start): 503 on /health, 503 with a clear message (and CORS headers) elsewhere, reported once per attempt", async () => {
    const onError = vi.fn();
    const db = { dialect: postgresDialect({ connectionString: "postgres://app:s3cret@127.0.0.1:1/appdb" }), kind: "postgres" as const };
    const browser = "https://front.example";
    const app = build(new App({ db, cors: { origins: [browser] }, onError }).schema(v1).resource("item"));
    expect((await probe(app)).health).toMatchObject(DOWN);
    const list = await rpc(app, "item.list", {}, { origin: browser });
    expect(list.status).toBe(503);
    // A browser reads the 503, instead of reporting a CORS error.
    expect(list.headers.get("access-control-allow-origin")).toBe(browser);
    expect(list.body).toMatchObject({ code: "SERVICE_UNAVAILABLE", message: expect.stringMatching(/database/i) });
    expect(JSON.stringify(list.body)).not.toContain("s3cret");
    const route = await request(app, "GET", "/nowhere");
    expect(route.status).toBe(503);
    expect(onError).toHaveBeenCalled();
  });

  it("after start() when the connection is lost (SQLite closed underneath): 503 everywhere, never 500", async () => {
    const database = new Database(":memory:");
    const app = await new App({ db: { dialect: new SqliteDialect({ database }), kind: "sqlite" }, onError: () => {} }).schema(v1).resource("item").start();
    expect((await request(app, "GET", "/health")).status).toBe(200);
    database.close();
    expect(await request(app, "GET", "/health")).toMatchObject(DOWN);
    const list = await rpc(app, "item.list", {});
    expect(list.status).toBe(503);
    expect(list.body.message).toMatch(/database/i);
    await app.close();
  });

  it.runIf(families().includes("postgres"))("when PostgreSQL drops the connections: the process survives, /health and procedures recover", async () => {
    const database = await reopenable("postgres");
    // Only this app's connections are dropped: other files use the same server at the same time.
    const applicationName = `trellis_${database.schema}`;
    const connectionString = process.env.DATABASE_URL!;
    const db = { dialect: postgresDialect({ connectionString, poolConfig: { max: 4, options: `-c search_path=${database.schema}`, application_name: applicationName } }), kind: "postgres" as const };
    const app = await new App({ db, onError: () => {} }).schema(v1).resource("item").start();
    expect((await rpc(app, "item.create", { name: "a" })).status).toBe(200);
    // What a server restart or a failover does to idle pooled connections.
    const killer = new pg.Client({ connectionString });
    await killer.connect();
    const killed = await killer.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [applicationName]).finally(() => killer.end());
    expect(killed.rowCount).toBeGreaterThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const statuses = [(await request(app, "GET", "/health")).status, (await rpc(app, "item.list", {})).status];
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    expect((await request(app, "GET", "/health")).status).toBe(200);
    expect((await rpc(app, "item.list", {})).body).toMatchObject([{ name: "a" }]);
    await app.close();
    await database.cleanup();
  });

  it("after the embedded database stopped underneath: 503 on /health and on procedures", async () => {
    const database = embedded({ dataDir: "memory://" });
    const app = await new App({ db: database, onError: () => {} }).schema(v1).resource("item").start();
    expect((await rpc(app, "item.create", { name: "a" })).status).toBe(200);
    await database.client.close();
    expect(await request(app, "GET", "/health")).toMatchObject(DOWN);
    expect((await rpc(app, "item.list", {})).status).toBe(503);
    await app.close();
    // The first embedded database in a process runs initdb: slow on a loaded machine.
  }, 120_000);

  it("after close(): 503 on /health, 503 naming the shutdown elsewhere, and through client()", async () => {
    const app = await new App({ db: { dialect: new SqliteDialect({ database: new Database(":memory:") }), kind: "sqlite" }, onError: () => {} })
      .schema(v1)
      .resource("item")
      .start();
    await app.close();
    const { health, ms } = await probe(app);
    expect(health).toMatchObject(DOWN);
    expect(ms).toBeLessThan(1500);
    const list = await rpc(app, "item.list", {});
    expect(list.status).toBe(503);
    expect(list.body.message).toMatch(/closed|shut/i);
    await expect(app.client().item.list({})).rejects.toMatchObject({ status: 503 });
  });
});
