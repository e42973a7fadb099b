import { context, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { sql } from "kysely";
import { z } from "zod";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import type { OutgoingMail } from "../../plugins/mail/index.js";
import { mailApp } from "../mail/fixture.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN } from "../support/auth.js";
import { waitFor } from "../jobs/support.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const TOKEN = "a-scrape-token-0123456789";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const traceparent = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

const delivered: OutgoingMail[] = [];
const transport = { send: async (message: OutgoingMail) => void delivered.push(message) };

/** Mail through the jobs plugin, and a job of the app's own that reads a row and fails on request. */
function jobsApp() {
  return mailApp(embedded({ dataDir: "memory://" }), { transport }, {}, { onError: () => {}, telemetry: { metrics: { token: TOKEN } } })
    .jobs({ pollingInterval: 0.5 })
    .job("report.build", { input: z.object({ fail: z.boolean() }), retry: 0 }, async ({ data, context }) => {
      await sql`select 1`.execute(context.db);
      if (data.fail) throw Object.assign(new Error("the report's source is gone"), { code: "REPORT_SOURCE_GONE" });
      return { rows: 1 };
    })
    .procedure("report.queue", (base) => base.input(z.object({ fail: z.boolean() })).handler(async ({ input, context }) => ({ id: await context.jobs.send("report.build", input) })));
}

let app: Awaited<ReturnType<ReturnType<typeof jobsApp>["start"]>>;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  app = await jobsApp().start();
}, 90_000);

afterAll(async () => {
  await app?.close();
  trace.disable();
  context.disable();
});

beforeEach(() => {
  exporter.reset();
  delivered.length = 0;
});

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((span) => span.name === name);
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const until = (name: string, count = 1) => waitFor(`${count} span(s) named ${name} among ${spans().map((s) => s.name).join(", ")}`, () => named(name).length >= count, 20_000);
const attributeValues = () => spans().flatMap((span) => Object.values(span.attributes).map(String));

async function scrape(): Promise<string> {
  const response = await app.handle(new Request(`${ORIGIN}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  expect(response.status).toBe(200);
  return response.text();
}

describe("job spans", () => {
  it("a job sent in a request: a producer span in the request's trace; its run a consumer trace of its own, linked to it", async () => {
    const queued = await rpc(app, "report.queue", { fail: false }, { traceparent });
    expect(queued.status).toBe(200);
    await until("process report.build");

    const procedure = named("report.queue")[0]!;
    const send = named("send report.build")[0]!;
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(send.spanContext().traceId).toBe(TRACE_ID);
    expect(send.parentSpanContext?.spanId).toBe(idOf(procedure));
    expect(send.attributes).toMatchObject({ "messaging.system": "pg-boss", "messaging.destination.name": "report.build", "messaging.operation.type": "send", "messaging.message.id": queued.body.id });

    const run = named("process report.build")[0]!;
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.spanContext().traceId).not.toBe(TRACE_ID);
    expect(run.links.map((link) => link.context)).toEqual([expect.objectContaining({ traceId: TRACE_ID, spanId: idOf(send) })]);
    expect(run.attributes).toMatchObject({ "messaging.message.id": queued.body.id, "trellis.job.name": "report.build", "trellis.job.attempt": 1, "trellis.job.outcome": "completed" });
    expect(run.status.code).not.toBe(SpanStatusCode.ERROR);
    // The handler's statement is under the run.
    expect(spans().some((span) => span.name === "SELECT" && span.parentSpanContext?.spanId === idOf(run))).toBe(true);
  });

  it("a failed run: the span carries the error's code, the outcome, and the counter moves", async () => {
    const before = await scrape();
    expect((await rpc(app, "report.queue", { fail: true })).status).toBe(200);
    await until("process report.build");
    const run = named("process report.build")[0]!;
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: "REPORT_SOURCE_GONE" });
    expect(run.attributes).toMatchObject({ "error.type": "REPORT_SOURCE_GONE", "trellis.job.outcome": "failed" });
    // The request carried no traceparent: its trace began at the server span, and the link points there.
    const send = named("send report.build")[0]!;
    expect(run.links.map((link) => link.context)).toEqual([expect.objectContaining({ traceId: send.spanContext().traceId, spanId: idOf(send) })]);
    expect(send.spanContext().traceId).not.toBe(TRACE_ID);
    expect(attributeValues().join(" ")).not.toContain("source is gone");

    const failed = /^trellis_job_runs_total\{queue="report\.build",outcome="failed"\} (\d+)$/m;
    expect(before).not.toMatch(failed);
    const after = await scrape();
    expect(after.match(failed)?.[1]).toBe("1");
    expect(after).toMatch(/^trellis_job_runs_total\{queue="report\.build",outcome="completed"\} 1$/m);
    expect(after).toMatch(/^trellis_job_queue_depth\{queue="report\.build",state="failed"\} 1$/m);
    expect(after).toMatch(/^trellis_job_queue_depth\{queue="mail\.send",state="created"\} 0$/m);
  });
});

describe("mail spans", () => {
  it("through jobs: the message's send under its job run, naming transport, kind and id, never an address", async () => {
    expect((await rpc(app, "notify", undefined, { traceparent })).status).toBe(200);
    // The run's span ends after the send's, its child.
    await until("process mail.send");
    const run = named("process mail.send")[0]!;
    const mail = named("mail send")[0]!;
    expect(mail.kind).toBe(SpanKind.CLIENT);
    expect(mail.parentSpanContext?.spanId).toBe(idOf(run));
    expect(mail.attributes).toMatchObject({ "trellis.mail.transport": "custom", "trellis.mail.kind": "custom", "trellis.mail.attempt": 1, "trellis.mail.outcome": "sent" });
    expect(mail.attributes["trellis.mail.id"]).toEqual(expect.any(String));
    expect(run.links[0]?.context.traceId).toBe(TRACE_ID);
    expect(delivered.map((message) => message.to)).toEqual(["someone@example.test"]);
    expect(attributeValues().filter((value) => value.includes("@"))).toEqual([]);
  });

  it("in process (no jobs): each attempt a trace of its own, linked to the span that queued it; a failure marked", async () => {
    let fail = true;
    const flakyTransport = {
      send: async () => {
        if (fail) {
          fail = false;
          throw Object.assign(new Error("421 try later for bob@example.test"), { code: "EENVELOPE" });
        }
      },
    };
    const local = await mailApp(sqliteMemory(), { transport: flakyTransport, retries: 1, retryDelayMs: 1 }, {}, { onError: () => {} }).start();
    try {
      expect((await rpc(local, "notify", undefined, { traceparent })).status).toBe(200);
      await until("mail send", 2);
      const [first, second] = named("mail send").sort((a, b) => Number(a.attributes["trellis.mail.attempt"]) - Number(b.attributes["trellis.mail.attempt"]));
      const procedure = named("notify")[0]!;
      for (const attempt of [first!, second!]) {
        expect(attempt.parentSpanContext).toBeUndefined();
        expect(attempt.links.map((link) => link.context.spanId)).toEqual([idOf(procedure)]);
        expect(attempt.attributes["trellis.mail.transport"]).toBe("custom");
      }
      expect(first!.status).toEqual({ code: SpanStatusCode.ERROR, message: "EENVELOPE" });
      expect(first!.attributes).toMatchObject({ "trellis.mail.attempt": 1, "trellis.mail.outcome": "failed", "error.type": "EENVELOPE" });
      expect(second!.attributes).toMatchObject({ "trellis.mail.attempt": 2, "trellis.mail.outcome": "sent" });
      expect(attributeValues().filter((value) => value.includes("@"))).toEqual([]);
    } finally {
      await local.close();
    }
  });
});
