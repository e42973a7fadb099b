/**
 * The OpenTelemetry SDK for the observability example: spans are batched and sent to an OTLP/HTTP
 * collector at `OTEL_EXPORTER_OTLP_ENDPOINT` (default http://localhost:4318), the collector's
 * standard address. Import this module before the app so the context manager is in place for
 * the first request.
 *
 * The spans' resource names the service `OTEL_SERVICE_NAME` (default `trellis-observability`).
 *
 * Trellis itself needs only `@opentelemetry/api`; this file also needs the SDK
 * (`@opentelemetry/sdk-trace-base` and `@opentelemetry/resources`, which it installs,
 * `@opentelemetry/context-async-hooks`) and the exporter `@opentelemetry/exporter-trace-otlp-http`,
 * which sends OTLP as JSON over HTTP.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter } from "@opentelemetry/sdk-trace-base";

export interface TracingSetup {
  /** Flushes pending spans and stops the exporter; call it at shutdown. */
  shutdown(): Promise<void>;
  /** Where spans go, for the start line. */
  destination: string;
  /** The `service.name` on every span. */
  serviceName: string;
}

/** `OTEL_EXPORTER_OTLP_ENDPOINT` is the collector's base URL; traces go to its `/v1/traces`. */
export function collectorUrl(env: Record<string, string | undefined> = process.env): string {
  const base = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://localhost:4318").replace(/\/$/, "")}/v1/traces`;
  return base;
}

/** The OTLP exporter, loaded by name: it is not a dependency of Trellis. */
async function otlpExporter(url: string): Promise<SpanExporter | undefined> {
  const name = "@opentelemetry/exporter-trace-otlp-http";
  try {
    const { OTLPTraceExporter } = (await import(name)) as { OTLPTraceExporter: new (options: { url: string }) => SpanExporter };
    return new OTLPTraceExporter({ url });
  } catch {
    return undefined;
  }
}

export async function startTracing(): Promise<TracingSetup> {
  const url = collectorUrl();
  const otlp = await otlpExporter(url);
  // Without the exporter package the spans are printed instead, so the example still shows them.
  const exporter = otlp ?? new ConsoleSpanExporter();
  const serviceName = process.env.OTEL_SERVICE_NAME || "trellis-observability";
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": serviceName }), spanProcessors: [new BatchSpanProcessor(exporter)] });
  // Spans nest (request > procedure > statement) through AsyncLocalStorage.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return {
    destination: otlp ? `OTLP ${url}` : "the console (npm install @opentelemetry/exporter-trace-otlp-http to send to a collector)",
    serviceName,
    shutdown: () => provider.shutdown(),
  };
}
