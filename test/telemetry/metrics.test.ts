import parse from "parse-prometheus-text-format";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { errorOf, request, rpc } from "../support/app.js";
import { App } from "../../presets/trellis.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { bytes, upload, uploadForm } from "../files/fixture.js";
import { observedApp } from "./fixture.js";
import { operationOf } from "../../plugins/telemetry/observers.js";

const TOKEN = "scrape-token-0123456789abcdef";
let database: TestDatabase;
let app: ReturnType<ReturnType<typeof observedApp>["build"]>;
let alice: SignedIn;
let admin: SignedIn;

beforeAll(async () => {
  database = await openDatabase("sqlite");
  app = await observedApp({ ...database, live: localLive() }, { telemetry: { metrics: { token: TOKEN } }, rateLimit: { max: 1000, windowMs: 60_000, key: (event) => event.headers.get("x-bucket") ?? "shared" } }).start();
  alice = await signUp(app, "alice@example.com");
  admin = await signUp(app, "root@example.com");
  await sql`update "user" set "role" = 'admin' where "id" = ${admin.userId}`.execute(app.db);
});

afterAll(async () => {
  await app?.close();
  await database?.close();
});

/** The scrape, parsed: `value(name, labels)` reads one sample (a histogram's count). */
async function scrape() {
  const response = await app.handle(new Request(`${ORIGIN}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const families = parse(text);
  const family = (name: string) => families.find((entry) => entry.name === name);
  /** A counter's or gauge's samples matching `labels`, summed. */
  const value = (name: string, labels: Record<string, string> = {}) => {
    const samples = family(name)?.metrics ?? [];
    const matching = samples.filter((sample) => Object.entries(labels).every(([key, wanted]) => sample.labels?.[key] === wanted));
    return matching.reduce((sum, sample) => sum + Number(sample.value ?? 0), 0);
  };
  /**
   * A histogram's observation count for `labels`, summed. The parser folds a labelled histogram's
   * series into one and drops their labels, so the `_count` lines are read from the text (the
   * parser still checks the family's type).
   */
  const count = (name: string, labels: Record<string, string> = {}) => {
    expect(family(name)?.type).toBe("HISTOGRAM");
    let total = 0;
    for (const match of text.matchAll(new RegExp(`^${name}_count(?:\\{(.*)\\})? (\\S+)$`, "gm"))) {
      const present = Object.fromEntries([...(match[1] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]));
      if (Object.entries(labels).every(([key, wanted]) => present[key] === wanted)) total += Number(match[2]);
    }
    return total;
  };
  return { families, family, value, count, text };
}

describe("telemetry options", () => {
  it("refuse a malformed configuration at build, naming each problem", async () => {
    const other = await openDatabase("sqlite");
    try {
      const app = observedApp({ ...other, live: localLive() }, { telemetry: { traces: "yes" as never, metrics: { path: "metrics", token: "short" } } });
      expect(errorOf(() => app.build())).toMatchObject({
        code: "TELEMETRY_BAD_OPTION",
        plugin: "telemetry",
        message: 'telemetry: traces must be true, false or "auto", got "yes"; metrics.path must start with "/", got "metrics"; metrics.token must be a string of at least 16 characters',
      });
    } finally {
      await other.close();
    }
  });

  it("need .auth() for metrics without a token", async () => {
    const other = await openDatabase("sqlite");
    try {
      const app = new App({ db: other, telemetry: { metrics: true } });
      expect(errorOf(() => app.build())).toMatchObject({ code: "KERNEL_AUTH_REQUIRED", message: expect.stringContaining("telemetry metrics at /metrics") });
    } finally {
      await other.close();
    }
  });

  it("telemetry: false leaves the plugin out", async () => {
    const other = await openDatabase("sqlite");
    const app = new App({ db: other, telemetry: false }).build();
    try {
      expect(app.describe().plugins.map((plugin: { name: string }) => plugin.name)).not.toContain("telemetry");
    } finally {
      await app.close();
      await other.close();
    }
  });
});

describe("/metrics", () => {
  it("is off by default: no route", async () => {
    const other = await openDatabase("sqlite");
    const plain = observedApp({ ...other, live: localLive() }).build();
    try {
      // A built app serves once migrated (503 "starting" before that).
      await plain.migrator.migrateToLatest();
      expect((await request(plain, "GET", "/metrics")).status).toBe(404);
    } finally {
      await plain.close();
      await other.close();
    }
  });

  it("answers 401 without a credential or with a wrong token, 403 to a signed-in user without the role", async () => {
    const none = await request(app, "GET", "/metrics");
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ code: "UNAUTHORIZED", status: 401 });
    expect((await request(app, "GET", "/metrics", { headers: { authorization: "Bearer wrong-token-0123456789abcdef" } })).status).toBe(401);
    const forbidden = await request(app, "GET", "/metrics", { headers: { cookie: alice.cookie } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ code: "FORBIDDEN", message: "Metrics need one of the roles: admin" });
    const allowed = await request(app, "GET", "/metrics", { headers: { cookie: admin.cookie } });
    expect(allowed.status).toBe(200);
    expect(String(allowed.body)).toContain("# TYPE trellis_http_requests_total counter");
  });

  it("counters move: requests, procedures, statements, errors, uploads, rate-limit rejections", async () => {
    const before = await scrape();
    const created = await rpc(app, "post.create", { title: "one" }, { cookie: alice.cookie, origin: ORIGIN });
    expect(created.status).toBe(200);
    expect((await rpc(app, "post.get", { where: { id: 999 } })).status).toBe(404);
    expect((await upload(app, uploadForm(new Blob([bytes(3000)], { type: "text/plain" }), "a.txt"), { cookie: alice.cookie })).status).toBe(200);
    const after = await scrape();

    const created200 = { method: "POST", route: "/rpc/post/create", status: "200" };
    expect(after.value("trellis_http_requests_total", created200) - before.value("trellis_http_requests_total", created200)).toBe(1);
    expect(after.count("trellis_http_request_duration_seconds", created200) - before.count("trellis_http_request_duration_seconds", created200)).toBe(1);
    const procedure = { procedure: "post.create", surface: "rpc", outcome: "ok" };
    expect(after.count("trellis_procedure_duration_seconds", procedure) - before.count("trellis_procedure_duration_seconds", procedure)).toBe(1);
    expect(after.count("trellis_procedure_duration_seconds", { procedure: "post.get", outcome: "error" })).toBeGreaterThanOrEqual(1);
    expect(after.value("trellis_errors_total", { code: "NOT_FOUND", surface: "rpc" }) - before.value("trellis_errors_total", { code: "NOT_FOUND", surface: "rpc" })).toBe(1);
    expect(after.count("trellis_db_statement_duration_seconds", { operation: "insert" })).toBeGreaterThan(before.count("trellis_db_statement_duration_seconds", { operation: "insert" }));
    expect(after.count("trellis_db_connection_wait_seconds")).toBeGreaterThan(before.count("trellis_db_connection_wait_seconds"));
    expect(after.count("trellis_storage_duration_seconds", { operation: "set" }) - before.count("trellis_storage_duration_seconds", { operation: "set" })).toBe(1);
    expect(after.value("trellis_upload_bytes_total") - before.value("trellis_upload_bytes_total")).toBe(3000);
    expect(after.family("trellis_live_subscribers")?.metrics[0]?.value).toBe("0");
    // Process metrics from prom-client: memory and event-loop lag.
    expect(after.value("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(after.family("nodejs_eventloop_lag_seconds")).toBeDefined();
  });

  it("label a token in a URL by its route template, never by the token", async () => {
    await app.handle(new Request(`${ORIGIN}/api/auth/reset-password/RESET0secret0TOKEN?callbackURL=%2Fnew`));
    await app.handle(new Request(`${ORIGIN}/api/auth/verify-email?token=VERIFY0secret0TOKEN`));
    const after = await scrape();
    expect(after.value("trellis_http_requests_total", { method: "GET", route: "/api/auth/**" })).toBeGreaterThanOrEqual(2);
    expect(after.text).not.toMatch(/0secret0/);
  });

  it("counts open live subscriptions, and labels a streamed procedure's surface live", async () => {
    const stream = (await app.client().post.live({})) as AsyncIterator<unknown>;
    try {
      await stream.next();
      const open = await scrape();
      expect(open.value("trellis_live_subscribers")).toBe(1);
      expect(open.count("trellis_procedure_duration_seconds", { procedure: "post.live", surface: "live" })).toBe(1);
    } finally {
      await stream.return?.();
    }
    expect((await scrape()).value("trellis_live_subscribers")).toBe(0);
  });

  it("counts rate-limit rejections, and only those 429s", async () => {
    const other = await openDatabase("sqlite");
    const limited = await observedApp({ ...other, live: localLive() }, { telemetry: { metrics: { token: TOKEN } }, rateLimit: { max: 1, windowMs: 60_000 } }).start();
    try {
      expect((await rpc(limited, "post.list", {})).status).toBe(200);
      expect((await rpc(limited, "post.list", {})).status).toBe(429);
      expect((await rpc(limited, "post.list", {})).status).toBe(429);
      const text = await (await limited.handle(new Request(`${ORIGIN}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }))).text();
      const families = parse(text);
      expect(families.find((family) => family.name === "trellis_rate_limit_rejections_total")?.metrics[0]?.value).toBe("2");
      const errors = families.find((family) => family.name === "trellis_errors_total")?.metrics ?? [];
      expect(errors.find((sample) => sample.labels?.code === "TOO_MANY_REQUESTS")?.value).toBe("2");
    } finally {
      await limited.close();
      await other.close();
    }
  });
});

describe("with no OpenTelemetry SDK registered", () => {
  it("a request that writes, reads and fails starts no span at all", async () => {
    const startSpan = vi.spyOn(app.sealed.service("telemetry")!.tracer!, "startSpan");
    try {
      expect((await rpc(app, "post.create", { title: "untraced" }, { cookie: alice.cookie, origin: ORIGIN })).status).toBe(200);
      expect((await rpc(app, "post.get", { where: { id: 999 } })).status).toBe(404);
      expect(startSpan).not.toHaveBeenCalled();
    } finally {
      startSpan.mockRestore();
    }
  });
});

describe("a reset registry", () => {
  it("hides every series until it is recorded again, then counts from zero", async () => {
    expect((await rpc(app, "post.list", {})).status).toBe(200);
    const listed = { method: "POST", route: "/rpc/post/list", status: "200" };
    expect((await scrape()).value("trellis_http_requests_total", listed)).toBeGreaterThanOrEqual(1);
    app.sealed.service("telemetry")!.registry!.resetMetrics();
    const reset = await scrape();
    // A scrape is counted once answered: the text it serves holds no request series yet.
    expect(reset.family("trellis_http_requests_total")?.metrics.map((sample) => sample.labels?.route)).toEqual([]);
    expect(reset.count("trellis_procedure_duration_seconds")).toBe(0);
    expect((await rpc(app, "post.list", {})).status).toBe(200);
    const again = await scrape();
    expect(again.value("trellis_http_requests_total", listed)).toBe(1);
    expect(again.count("trellis_http_request_duration_seconds", listed)).toBe(1);
    expect(again.count("trellis_procedure_duration_seconds", { procedure: "post.list", surface: "rpc", outcome: "ok" })).toBe(1);
    expect(again.count("trellis_db_statement_duration_seconds", { operation: "select" })).toBeGreaterThanOrEqual(1);
  });
});

describe("the statement operation label", () => {
  it("is the first keyword, or the write a with-query ends in", () => {
    const cases = {
      "select 1": "select",
      "  SELECT * from x": "select",
      'insert into "file" ("id") values ($1)': "insert",
      "update t set a = ?": "update",
      "delete from t": "delete",
      "with a as (select 1) select * from a": "select",
      "with a as (select 1) insert into b select * from a": "insert",
      "PRAGMA foreign_keys = ON": "other",
    };
    for (const [sql, operation] of Object.entries(cases)) expect([sql, operationOf(sql)]).toEqual([sql, operation]);
  });
});
