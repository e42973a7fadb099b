import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";

/**
 * The OpenTelemetry SDK as an app would register it, exporting to nothing: every span is created,
 * recorded, ended and handed to an exporter that drops it. What tracing costs without the network.
 */
export function registerNoopSdk(): () => void {
  const exporter: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return () => {
    trace.disable();
    context.disable();
  };
}

/** The ratio line the telemetry figures print: `a / b` with its target. */
export function overhead(label: string, of: number, to: number, target?: number): string {
  const cost = (1 - of / to) * 100;
  const verdict = target === undefined ? "(reported)" : `(target < ${target}%) ${cost < target ? "OK" : "ABOVE TARGET"}`;
  return `  ${label.padEnd(52)} ${of.toFixed(0).padStart(7)} vs ${to.toFixed(0).padStart(7)} req/s   overhead ${cost.toFixed(1).padStart(5)}% ${verdict}`;
}
