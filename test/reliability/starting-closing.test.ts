import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN, signUp } from "../support/auth.js";

/**
 * Starting and closing, through the front door: before the schema is migrated (or while it is) an
 * app answers 503 and `/health` says `starting`, never a 500 about a missing relation; while
 * `close()` runs, every surface answers 503, the auth library's routes included.
 */
const v1 = schema("1")
  .auth()
  .table("thing", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .build();
const SECRET = "a-test-secret-that-is-long-enough-0123456789";

function appOn(db: ReturnType<typeof embedded>, reported: unknown[]) {
  return new App({ baseUrl: ORIGIN, db, onError: (error) => reported.push(error) })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("thing")
    .openapi();
}

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

  it("answers 503 on every surface and /health says starting, then serves once migrated", async () => {
    const health = await request(app, "GET", "/health");
    expect(health).toMatchObject({ status: 503, body: { status: "starting", database: "up" } });
    const list = await rpc(app, "thing.list", {});
    expect(list).toMatchObject({ status: 503, body: UNAVAILABLE });
    const rest = await request(app, "GET", "/rest/thing");
    expect(rest).toMatchObject({ status: 503, body: UNAVAILABLE });
    const session = await request(app, "GET", "/api/auth/get-session", { headers: { origin: ORIGIN } });
    expect(session).toMatchObject({ status: 503, body: UNAVAILABLE });
    await expect(app.client().thing.list({})).rejects.toMatchObject({ status: 503 });

    // Requests arriving while the migration runs wait for nothing and get the same 503.
    const migrating = app.migrator.migrateToLatest();
    const during = await Promise.all([rpc(app, "thing.list", {}), request(app, "GET", "/health")]);
    expect(during[0]).toMatchObject({ status: 503, body: UNAVAILABLE });
    expect(during[1]).toMatchObject({ status: 503, body: { status: "starting" } });
    expect((await migrating).error).toBeUndefined();

    expect(await request(app, "GET", "/health")).toMatchObject({ status: 200, body: { status: "ok", database: "up" } });
    expect(await rpc(app, "thing.create", { name: "a" })).toMatchObject({ status: 200, body: { name: "a" } });
    // Not migrated yet is the app's state, not a failure.
    expect(reported).toEqual([]);
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
