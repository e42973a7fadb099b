import { spawn } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { within } from "../support/within.js";

/**
 * examples/observability as a supervisor runs it (`node --import tsx examples/observability/server.ts`,
 * one process), with a loopback HTTP server standing in for the OpenTelemetry collector at
 * OTEL_EXPORTER_OTLP_ENDPOINT: what the collector receives is the OTLP/HTTP JSON export of the
 * request's spans. Not through the `tsx` command: it forwards a signal to its child process and
 * kills that child outright when it has not acknowledged within 30 ms, which a loaded machine
 * misses, and then nothing is flushed.
 */
const root = resolve(import.meta.dirname, "../..");
const TOKEN = "an-example-scrape-token-0123";
const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

interface Export {
  path: string;
  contentType: string | undefined;
  body: OtlpTraces;
}
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
}
interface OtlpTraces {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
}

const exports: Export[] = [];
const collector = createServer((request: IncomingMessage, response) => {
  let text = "";
  request.on("data", (chunk) => (text += chunk));
  request.on("end", () => {
    exports.push({ path: request.url ?? "", contentType: request.headers["content-type"], body: JSON.parse(text) as OtlpTraces });
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});

let child: ReturnType<typeof spawn>;
let exited: Promise<void>;
let url: string;
let output = "";

beforeAll(async () => {
  await new Promise<void>((listening) => collector.listen(0, "127.0.0.1", listening));
  const { port } = collector.address() as AddressInfo;
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|NODE_TEST_CONTEXT$)/.test(key)));
  child = spawn(process.execPath, ["--import", "tsx", "examples/observability/server.ts"], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...inherited, NODE_ENV: "development", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: "notes-under-test", METRICS_TOKEN: TOKEN, DATA_DIR: "memory://", PORT: "0", HOST: "127.0.0.1" },
  });
  exited = new Promise((done) => child.once("exit", () => done()));
  url = await new Promise<string>((started, failed) => {
    const timer = setTimeout(() => failed(new Error(`the example printed no start lines within 100 s:\n${output}`)), 100_000);
    child.stdout!.on("data", (chunk) => {
      output += chunk;
      // The last of the three start lines: the others have arrived once it has (they may come in separate chunks).
      const found = /observability example at (http:\/\/[\w.:[\]-]+)/.exec(output);
      if (found && output.includes("metrics: curl")) {
        clearTimeout(timer);
        started(found[1]!);
      }
    });
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => {
      clearTimeout(timer);
      failed(new Error(`the example exited with ${code}:\n${output}`));
    });
  });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
  await new Promise((closed) => collector.close(closed));
});

const text = (attributes: OtlpAttribute[], key: string) => attributes.find((attribute) => attribute.key === key)?.value.stringValue;

describe("examples/observability", () => {
  it("serves metrics for its token, and exports the request's spans to the collector over OTLP/HTTP JSON", async () => {
    expect(output).toContain("spans of notes-under-test go to OTLP http://127.0.0.1:");
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("trellis_http_requests_total");

    const search = await fetch(`${url}/rpc/note/search`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` },
      body: JSON.stringify({ json: { text: "hello" } }),
    });
    expect(search.status).toBe(200);

    // Shutting down flushes the batch (otherwise sent within 5 s).
    process.kill(-child.pid!, "SIGTERM");
    await within(exited, 30_000, "the example exiting after SIGTERM");
    expect(exports.length, output).toBeGreaterThan(0);
    for (const sent of exports) {
      expect(sent.path).toBe("/v1/traces");
      expect(sent.contentType).toMatch(/^application\/json/);
    }
    const resources = exports.flatMap((sent) => sent.body.resourceSpans);
    expect(new Set(resources.map((resource) => text(resource.resource.attributes, "service.name")))).toEqual(new Set(["notes-under-test"]));
    const spans = resources.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    const ours = spans.filter((span) => span.traceId === TRACE_ID);
    const server = ours.find((span) => span.name === "POST /rpc/note/search");
    const procedure = ours.find((span) => span.name === "note.search");
    const rank = ours.find((span) => span.name === "note.search.rank");
    const select = ours.find((span) => span.name === "SELECT" && span.parentSpanId === rank?.spanId);
    expect(server?.parentSpanId).toBe("b7ad6b7169203331");
    expect(text(server!.attributes, "http.route")).toBe("/rpc/note/search");
    expect(procedure?.parentSpanId).toBe(server!.spanId);
    expect(rank?.parentSpanId).toBe(procedure!.spanId);
    expect(text(select!.attributes, "db.query.text")).toMatch(/^select \* from "note" where "text" like \$1/);
  }, 120_000);
});
