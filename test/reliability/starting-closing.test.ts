import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { z } from "zod";
import { sql } from "kysely";
import { App, mcp } from "../../presets/trellis.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN, signUp } from "../support/auth.js";

/**
 * Starting and closing, through the front door: a built app serves before its schema is migrated
 * (`.build()` does not migrate, `handle()` serves); only what needs the missing tables answers 503
 * "starting", with its CORS headers, and `/health` says `starting`. Once migrated, a query against a
 * table that does not exist is a coding error: a 500 reported to `onError`, on RPC, REST and MCP.
 * While `close()` runs, every surface answers 503, the auth library's routes included.
 */
const v1 = schema("1")
  .auth()
  .table("thing", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .build();
const SECRET = "a-test-secret-that-is-long-enough-0123456789";

function appOn(db: ReturnType<typeof embedded>, reported: unknown[]) {
  return new App({ baseUrl: ORIGIN, db, cors: { origins: [BROWSER] }, onError: (error) => reported.push(error) })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("thing")
    .procedure("ping", (base) => base.meta(mcp.tool()).handler(() => "pong"))
    .procedure("broken", (base) =>
      base.meta(mcp.tool()).input(z.object({}).optional()).handler(async ({ context }) => {
        await sql`select * from no_such_table`.execute(context.db);
        return "unreachable";
      }),
    )
    .route("GET", "/hello", () => new Response("hi"))
    .route("GET", "/broken", async (_event, context) => {
      await sql`select * from no_such_table`.execute(context.db);
      return new Response("unreachable");
    })
    .openapi()
    .mcp();
}

const BROWSER = "https://front.example";
const UNAVAILABLE = { code: "SERVICE_UNAVAILABLE", message: expect.stringMatching(/starting|migrat/i) };

describe("a built app before and while it is migrated", () => {
  const reported: unknown[] = [];
  let app: ReturnType<ReturnType<typeof appOn>["build"]>;
  beforeAll(async () => {
    app = appOn(embedded({ dataDir: "memory://" }), reported).build();
    // Set up (the database opened), not migrated: what a deploy sees before it runs the migrator.
    await app.migrator.getMigrations();
  }, 60_000);
  afterAll(() => app?.close());

  it("serves what needs no table, answers 503 (with CORS) where the schema is missing, then serves once migrated", async () => {
    const health = await request(app, "GET", "/health");
    expect(health).toMatchObject({ status: 503, body: { status: "starting", database: "up" } });
    // Procedures and routes that never touch the database answer as on any app.
    expect(await rpc(app, "ping")).toMatchObject({ status: 200, body: "pong" });
    expect(await request(app, "POST", "/rest/ping")).toMatchObject({ status: 200, body: "pong" });
    expect(await request(app, "GET", "/hello")).toMatchObject({ status: 200, body: "hi" });
    const document = await request(app, "GET", "/openapi.json");
    expect(document).toMatchObject({ status: 200, body: { servers: [{ url: `${ORIGIN}/rest` }] } });
    expect(await app.client().ping()).toBe("pong");
    // What needs the missing tables is a 503 "starting", with the headers a browser needs to read it.
    const list = await rpc(app, "thing.list", {}, { origin: BROWSER });
    expect(list).toMatchObject({ status: 503, body: UNAVAILABLE });
    expect(list.headers.get("access-control-allow-origin")).toBe(BROWSER);
    const rest = await request(app, "GET", "/rest/thing", { headers: { origin: BROWSER } });
    expect(rest).toMatchObject({ status: 503, body: UNAVAILABLE });
    expect(rest.headers.get("access-control-allow-origin")).toBe(BROWSER);
    await expect(app.client().thing.list({})).rejects.toMatchObject({ status: 503 });

    // Requests arriving while the migration runs: the ones without tables are served.
    const migrating = app.migrator.migrateToLatest();
    const during = await Promise.all([rpc(app, "ping"), request(app, "GET", "/health")]);
    expect(during[0]).toMatchObject({ status: 200, body: "pong" });
    expect([200, 503]).toContain(during[1].status);
    expect((await migrating).error).toBeUndefined();

    expect(await request(app, "GET", "/health")).toMatchObject({ status: 200, body: { status: "ok", database: "up" } });
    expect(await rpc(app, "thing.create", { name: "a" })).toMatchObject({ status: 200, body: { name: "a" } });
    // Not migrated yet is the app's state, not a failure.
    expect(reported).toEqual([]);
  }, 60_000);

  it("answers a query against a missing table on a migrated app with a reported 500 on RPC, REST, MCP and routes", async () => {
    await app.migrator.migrateToLatest();
    reported.length = 0;
    const internal = { code: "INTERNAL_SERVER_ERROR", message: "Internal server error" };
    expect(await rpc(app, "broken", {})).toMatchObject({ status: 500, body: internal });
    expect(await request(app, "POST", "/rest/broken")).toMatchObject({ status: 500, body: internal });
    const tool = await request(app, "POST", "/mcp", {
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "broken", arguments: {} } }),
    });
    expect(tool.body.result).toMatchObject({ isError: true, structuredContent: { status: 500, ...internal } });
    expect(await request(app, "GET", "/broken")).toMatchObject({ status: 500, body: internal });
    expect(reported).toHaveLength(4);
  }, 60_000);
});

describe("an app while close() runs", () => {
  const reported: unknown[] = [];
  let db: ReturnType<typeof embedded>;
  let app: Awaited<ReturnType<ReturnType<typeof appOn>["start"]>>;
  let cookie: string;
  beforeAll(async () => {
    db = embedded({ dataDir: "memory://" });
    app = await appOn(db, reported).start();
    cookie = (await signUp(app, "ada@example.test")).cookie;
  }, 60_000);

  it("answers 503 to requests in flight and arriving, on RPC, REST, /health and /api/auth/**", async () => {
    const json = { "content-type": "application/json", origin: ORIGIN };
    const calls = () => [
      rpc(app, "thing.create", { name: "x" }),
      request(app, "GET", "/rest/thing"),
      request(app, "GET", "/api/auth/get-session", { headers: { cookie, origin: ORIGIN } }),
      request(app, "POST", "/api/auth/sign-in/email", { headers: json, body: JSON.stringify({ email: "ada@example.test", password: "correct-horse-battery-staple" }) }),
      request(app, "POST", "/api/auth/sign-up/email", { headers: json, body: JSON.stringify({ email: "bo@example.test", password: "correct-horse-battery-staple", name: "Bo" }) }),
    ];
    const inFlight = calls();
    const closing = app.close();
    const arriving = calls();
    const health = request(app, "GET", "/health");
    await closing;
    const answers = await Promise.all([...inFlight, ...arriving]);
    for (const answer of answers) {
      // A request that finished before the database went away may have succeeded; none failed otherwise.
      if (answer.status < 300) continue;
      expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 503 });
    }
    // Everything that arrived after close() began is refused.
    for (const answer of answers.slice(inFlight.length)) expect(answer.status).toBe(503);
    expect((await health).status).toBe(503);
    expect(reported).toEqual([]);
  }, 60_000);
});
