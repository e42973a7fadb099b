import { context, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { bytes, upload, uploadForm } from "../files/fixture.js";
import { captureLogger, observedApp } from "./fixture.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const lines: Record<string, unknown>[] = [];
let app: ReturnType<ReturnType<typeof observedApp>["build"]>;
let alice: SignedIn;

beforeAll(async () => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
  app = await observedApp(embedded({ dataDir: "memory://" }), { logger: captureLogger(lines), telemetry: { userId: true } }).start();
  alice = await signUp(app, "alice@example.com");
});

afterAll(async () => {
  await app?.close();
  trace.disable();
  context.disable();
});

beforeEach(() => {
  exporter.reset();
  lines.length = 0;
});

const spans = () => exporter.getFinishedSpans();
const byName = (name: string) => spans().filter((span) => span.name === name);
const one = (name: string) => {
  const found = byName(name);
  expect(found.map((span) => span.name), `one span named ${name} among ${spans().map((s) => s.name).join(", ")}`).toEqual([name]);
  return found[0]!;
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const childrenOf = (span: ReadableSpan) => spans().filter((child) => parentOf(child) === idOf(span));
const descendantsOf = (span: ReadableSpan): ReadableSpan[] => childrenOf(span).flatMap((child) => [child, ...descendantsOf(child)]);

describe("traces with the OpenTelemetry SDK registered", () => {
  it("an upload: server span from the caller's traceparent, the procedure under it, the storage write and SQL under that", async () => {
    const file = bytes(2048);
    const { status, body } = await upload(app, uploadForm(new Blob([file], { type: "text/plain" }), "secret-plan.txt"), { cookie: alice.cookie, traceparent });
    expect(status).toBe(200);

    const server = one("POST /rpc/file/upload");
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(server)).toBe(CALLER_SPAN);
    expect(server.attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/rpc/file/upload", "http.response.status_code": 200, "enduser.id": alice.userId });

    const procedure = one("file.upload");
    expect(parentOf(procedure)).toBe(idOf(server));
    expect(procedure.attributes).toMatchObject({ "trellis.procedure.name": "file.upload", "trellis.procedure.surface": "rpc" });

    const stored = one("storage set");
    expect(parentOf(stored)).toBe(idOf(procedure));
    expect(stored.kind).toBe(SpanKind.CLIENT);
    // Streamed into the store (its size is the file record's, not the span's).
    expect(stored.attributes["trellis.storage.operation"]).toBe("set");

    // The write: the file row, inserted under the procedure; the read: the session lookup, within the
    // request (under the auth library's own spans, which join the same trace).
    const inserts = childrenOf(procedure).filter((span) => span.name === "INSERT");
    expect(inserts.length).toBeGreaterThanOrEqual(1);
    expect(String(inserts[0]!.attributes["db.query.text"])).toMatch(/^insert into "file"/);
    expect(inserts[0]!.attributes["db.system.name"]).toBe("postgresql");
    const reads = descendantsOf(server).filter((span) => span.name === "SELECT" && String(span.attributes["db.query.text"]).includes('"session"'));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    for (const span of spans()) expect(span.spanContext().traceId).toBe(TRACE_ID);

    // Parameters, cookies and file names never reach an attribute.
    const attributes = JSON.stringify(spans().map((span) => span.attributes));
    expect(attributes).not.toContain("secret-plan");
    expect(attributes).not.toContain(alice.cookie.split("=")[1]!.slice(0, 20));
    expect(attributes).not.toContain(body.id === undefined ? "unreachable" : "rendered/");

    // The request's log line carries the trace id.
    const line = lines.find((entry) => entry.path === "/rpc/file/upload");
    expect(line).toMatchObject({ traceId: TRACE_ID, spanId: idOf(server), status: 200 });
  });

  it("a procedure that reads, writes, stores and adds a span of its own: one tree", async () => {
    const result = await rpc(app, "post.publish", { title: "Hello" }, { traceparent });
    expect(result.status).toBe(200);
    const server = one("POST /rpc/post/publish");
    const procedure = one("post.publish");
    expect(parentOf(procedure)).toBe(idOf(server));
    const statements = childrenOf(procedure).map((span) => span.name);
    expect(statements).toEqual(expect.arrayContaining(["SELECT", "INSERT", "post.render"]));
    const select = childrenOf(procedure).find((span) => span.name === "SELECT")!;
    expect(select.attributes["db.query.text"]).toMatch(/where "title" = \$1/);
    expect(JSON.stringify(select.attributes)).not.toContain("Hello");
    const render = one("post.render");
    expect(render.attributes["post.id"]).toBe(result.body.id);
    expect(childrenOf(render).map((span) => span.name)).toEqual(["storage set"]);
    // Anonymous: no user id on the span.
    expect(server.attributes["enduser.id"]).toBeUndefined();
  });

  it("a route template, not the raw path, names the request's span", async () => {
    const response = await app.handle(new Request(`${ORIGIN}/files/does-not-exist`, { headers: { cookie: alice.cookie } }));
    expect(response.status).toBe(404);
    const server = one("GET /files/:id");
    expect(server.attributes["http.route"]).toBe("/files/:id");
    expect(server.attributes["url.path"]).toBe("/files/does-not-exist");
    expect(server.attributes["error.type"]).toBe("NOT_FOUND");
    // A 4xx is the caller's: the server span is not failed.
    expect(server.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it("errors are recorded with their code, and a 500 fails the server span without its message", async () => {
    expect((await rpc(app, "post.fail", { kind: "missing" })).status).toBe(404);
    const missing = one("post.fail");
    expect(missing.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "NOT_FOUND" });
    expect(missing.attributes["error.type"]).toBe("NOT_FOUND");
    exporter.reset();

    expect((await rpc(app, "post.fail", { kind: "bug" })).status).toBe(500);
    const server = one("POST /rpc/post/fail");
    expect(server.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "INTERNAL_SERVER_ERROR" });
    // The procedure's span names what it threw (here a plain Error); the request's, what was answered.
    expect(one("post.fail").attributes["error.type"]).toBe("Error");
    expect(JSON.stringify(spans().map((span) => [span.attributes, span.status, span.events]))).not.toContain("secret value");
  });

  it("an unknown /rpc path keeps the template: no unbounded span names", async () => {
    expect((await rpc(app, "nothing.here")).status).toBe(404);
    expect(one("POST /rpc/**").attributes["http.route"]).toBe("/rpc/**");
  });

  it("tokens in a URL reach neither the request's log line nor its span", async () => {
    const urls = [
      ["/api/auth/reset-password/RESET0secret0TOKEN?callbackURL=%2Fnew-password", "/api/auth/reset-password/[redacted]", "callbackURL=%2Fnew-password"],
      ["/api/auth/verify-email?token=VERIFY0secret0TOKEN&callbackURL=%2F", "/api/auth/verify-email", "token=[redacted]&callbackURL=%2F"],
      ["/api/auth/magic-link/verify?token=MAGIC0secret0TOKEN", "/api/auth/magic-link/verify", "token=[redacted]"],
      // A link's landing page carries the token in its own query, and in a callback URL.
      ["/new-password?token=PAGE0secret0TOKEN", "/new-password", "token=[redacted]"],
      ["/api/auth/sign-in/social?callbackURL=%2Fnew-password%3Ftoken%3DNESTED0secret0TOKEN", "/api/auth/sign-in/social", "callbackURL=%2Fnew-password%3Ftoken%3D%5Bredacted%5D"],
    ] as const;
    for (const [url, path, query] of urls) {
      exporter.reset();
      lines.length = 0;
      await app.handle(new Request(`${ORIGIN}${url}`));
      const [server] = spans().filter((span) => span.kind === SpanKind.SERVER);
      expect([url, server!.attributes["url.path"], server!.attributes["url.query"]]).toEqual([url, path, query]);
      const line = lines.find((entry) => entry.requestId !== undefined);
      expect([url, line?.path]).toEqual([url, path]);
      expect(JSON.stringify([lines, spans().map((span) => [span.name, span.attributes, span.events])])).not.toMatch(/0secret0/);
    }
  });

  it("with the SDK gone, nothing is recorded and the log line has no trace id", async () => {
    trace.disable();
    try {
      expect((await rpc(app, "post.publish", { title: "Quiet" }, { traceparent })).status).toBe(200);
      expect(spans()).toEqual([]);
      expect(lines.find((entry) => entry.path === "/rpc/post/publish")).not.toHaveProperty("traceId");
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
  });
});
