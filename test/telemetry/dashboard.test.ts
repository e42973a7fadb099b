import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import parse from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObservedApp } from "../../examples/observability/app.js";
import { collectorUrl } from "../../examples/observability/tracing.js";
import { METRIC_NAMES } from "../../plugins/telemetry/index.js";
import { codeBlocks } from "../docs/markdown.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { ORIGIN } from "../support/auth.js";

const root = resolve(import.meta.dirname, "../..");
const TOKEN = "dashboard-token-0123456789";
let database: TestDatabase;
let app: Awaited<ReturnType<ReturnType<typeof createObservedApp>["start"]>>;
/** Every metric family the example app serves, histogram series names included. */
const exported = new Set<string>();

beforeAll(async () => {
  database = await openDatabase("sqlite");
  app = await createObservedApp({ db: database, metricsToken: TOKEN, secret: "a-test-secret-that-is-long-enough-0123456789" }).start();
  expect((await rpc(app, "note.search", { text: "x" })).status).toBe(200);
  const response = await app.handle(new Request(`${ORIGIN}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  expect(response.status).toBe(200);
  for (const family of parse(await response.text())) {
    exported.add(family.name);
    if (family.type === "HISTOGRAM" || family.type === "SUMMARY") for (const suffix of ["_bucket", "_sum", "_count"]) exported.add(family.name + suffix);
  }
});

afterAll(async () => {
  await app?.close();
  await database?.close();
});

/** PromQL's own words, which look like metric names in an expression. */
const PROMQL = new Set(["sum", "rate", "irate", "increase", "histogram_quantile", "by", "without", "le", "avg", "max", "min", "count"]);

describe("the Grafana dashboard in docs/observability.md", () => {
  const block = codeBlocks(root, "docs/observability.md").find((entry) => entry.lang === "json");

  it("is valid JSON with panels and queries", () => {
    expect(block).toBeDefined();
    const dashboard = JSON.parse(block!.code);
    expect(dashboard.title).toBe("Trellis");
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(6);
    for (const panel of dashboard.panels) expect(panel.targets.length).toBeGreaterThan(0);
  });

  it("names only metrics the app exports, and covers request rate, p99, errors, queue wait and live subscribers", () => {
    const dashboard = JSON.parse(block!.code) as { panels: { targets: { expr: string }[] }[] };
    const expressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    // Identifiers outside label matchers, quoted strings and range selectors.
    const named = new Set(
      expressions.flatMap((expr) =>
        [...expr.replace(/\{[^}]*\}|"[^"]*"|\[[^\]]*\]|\bby \([^)]*\)/g, " ").matchAll(/[a-zA-Z_:][\w:]*/g)].map((match) => match[0]).filter((word) => !PROMQL.has(word) && !/^\d/.test(word)),
      ),
    );
    expect([...named].filter((name) => !exported.has(name))).toEqual([]);
    for (const needed of ["trellis_http_requests_total", "trellis_http_request_duration_seconds_bucket", "trellis_errors_total", "trellis_db_connection_wait_seconds_bucket", "trellis_live_subscribers"]) {
      expect(named).toContain(needed);
    }
  });

  it("documents every metric the plugin exports", () => {
    const page = readFileSync(resolve(root, "docs/observability.md"), "utf8");
    for (const name of METRIC_NAMES) {
      expect(exported).toContain(name);
      expect(page).toContain(`\`${name}\``);
    }
  });
});

describe("examples/observability", () => {
  it("reads the collector address from the environment", () => {
    expect(collectorUrl({})).toBe("http://localhost:4318/v1/traces");
    expect(collectorUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toBe("http://collector:4318/v1/traces");
    expect(collectorUrl({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/custom" })).toBe("http://traces:4318/custom");
  });
});
