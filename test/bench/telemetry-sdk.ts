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

/**
 * The line the telemetry figures print: throughput of `of` against `to`, the cost in percent, and
 * (in process) the median latencies, which a loaded machine disturbs less than the throughput.
 */
export function overhead(label: string, of: number, to: number, target?: number, p50?: { of: number; to: number }): string {
  const cost = (1 - of / to) * 100;
  const verdict = target === undefined ? "(reported)" : `(target < ${target}%) ${cost < target ? "OK" : "ABOVE TARGET"}`;
  const median = p50 ? `   p50 ${(p50.of * 1000).toFixed(1)} vs ${(p50.to * 1000).toFixed(1)} us (${((p50.of / p50.to - 1) * 100).toFixed(1)}%)` : "";
  return `  ${label.padEnd(48)} ${of.toFixed(0).padStart(7)} vs ${to.toFixed(0).padStart(7)} req/s   overhead ${cost.toFixed(1).padStart(5)}% ${verdict}${median}`;
}

/**
 * CPU time per operation (user + system, microseconds), the least of `rounds` alternating rounds
 * of `count` operations each. On a machine shared with other work, wall-clock throughput swings by
 * tens of percent between rounds; the CPU the process itself spends per request barely moves.
 */
export async function cpuPerOp(candidates: { name: string; op: () => Promise<unknown> }[], { rounds = 5, count = 3000, warmup = 500 } = {}): Promise<Map<string, number>> {
  const best = new Map<string, number>();
  for (const { op } of candidates) for (let i = 0; i < warmup; i++) await op();
  for (let round = 0; round < rounds; round++) {
    for (const { name, op } of candidates) {
      const start = process.cpuUsage();
      for (let i = 0; i < count; i++) await op();
      const used = process.cpuUsage(start);
      const perOp = (used.user + used.system) / count;
      best.set(name, Math.min(best.get(name) ?? Infinity, perOp));
    }
  }
  return best;
}

/** The CPU line: microseconds per request with and without, and the cost in percent. */
export function cpuOverhead(label: string, of: number, to: number, target?: number): string {
  const cost = (of / to - 1) * 100;
  const verdict = target === undefined ? "(reported)" : `(target < ${target}%) ${cost < target ? "OK" : "ABOVE TARGET"}`;
  return `  ${label.padEnd(48)} ${of.toFixed(1).padStart(7)} vs ${to.toFixed(1).padStart(7)} us CPU/request   overhead ${cost.toFixed(1).padStart(5)}% ${verdict}`;
}
