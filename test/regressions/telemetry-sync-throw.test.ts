import { context, trace, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import parse from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePlugin, type HttpMiddleware } from "../../kernel/index.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN } from "../support/auth.js";
import { observedApp } from "../telemetry/fixture.js";

/**
 * The telemetry middleware calls `next()` as it comes (`atOnce`). A later middleware that is not
 * async and throws (one a plugin registers) throws out of `next()` synchronously: the kernel still
 * answered 500, but the request was missing from `trellis_http_requests_total` and the error count.
 */
const TOKEN = "scrape-token-0123456789abcdef";
const throwing: HttpMiddleware = (event, next) => {
  if (event.path === "/boom") throw new Error("a middleware that throws at once");
  return next();
};
throwing.displayName = "throwing:line";
const throwingPlugin = definePlugin({ name: "throwing", stage: "edge", build: () => ({ middleware: [throwing] }) });

let database: TestDatabase;
let app: any;

beforeAll(async () => {
  database = await openDatabase("sqlite");
  app = await observedApp({ ...database, live: localLive() }, { telemetry: { metrics: { token: TOKEN } } })
    .use(throwingPlugin)
    .start();
});

afterAll(async () => {
  await app?.close();
  await database?.close();
});

async function requests(labels: Record<string, string>): Promise<number> {
  const response = await app.handle(new Request(`${ORIGIN}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  expect(response.status).toBe(200);
  const family = parse(await response.text()).find((entry) => entry.name === "trellis_http_requests_total");
  const samples = family?.metrics ?? [];
  return samples
    .filter((sample) => Object.entries(labels).every(([key, wanted]) => sample.labels?.[key] === wanted))
    .reduce((sum, sample) => sum + Number(sample.value ?? 0), 0);
}

describe("a later middleware that throws synchronously", () => {
  it("is answered 500 and counted in the request metrics", async () => {
    const labels = { method: "GET", status: "500" };
    const before = await requests(labels);
    const response = await app.handle(new Request(`${ORIGIN}/boom`));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
    expect((await requests(labels)) - before).toBe(1);
  });

  it("with a tracer registered: the server span ends as a 500, and the request is counted", async () => {
    const exporter = new InMemorySpanExporter();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    try {
      const labels = { method: "GET", status: "500" };
      const before = await requests(labels);
      const response = await app.handle(new Request(`${ORIGIN}/boom`));
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
      const server = exporter.getFinishedSpans().filter((span) => span.attributes["url.path"] === "/boom");
      expect(server.map((span) => [span.attributes["http.response.status_code"], span.status.code])).toEqual([[500, SpanStatusCode.ERROR]]);
      expect((await requests(labels)) - before).toBe(1);
    } finally {
      trace.disable();
      context.disable();
    }
  });
});
