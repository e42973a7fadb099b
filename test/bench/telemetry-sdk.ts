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

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A candidate's cost against the baseline: the median of its per-round ratios, and their middle half. */
export interface Cost {
  /** Percent; positive is dearer than the baseline. */
  median: number;
  /** The 25th and 75th percentiles of the per-round costs, percent. */
  spread: [number, number];
}

/** Per-round ratios as a cost: median and interquartile range, in percent. */
export function costOf(ratios: readonly number[]): Cost {
  const sorted = [...ratios].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! - 1) * 100;
  return { median: (median(sorted) - 1) * 100, spread: [at(0.25), at(0.75)] };
}

/**
 * In-process and paired: many short rounds (a few milliseconds each), each running every candidate
 * for `count` sequential operations (in an order rotated every round, so none always runs first),
 * then each candidate's time per operation divided by the baseline's (the first candidate) in the
 * same round. A loaded machine slows whole stretches of the run; a ratio within one short round
 * barely sees it, and the median over rounds drops the rounds a burst did hit. Both wall time and
 * the process's own CPU time.
 */
export async function pairedCosts(
  candidates: { name: string; op: () => Promise<unknown> }[],
  { rounds = 600, count = 10, warmup = 500 } = {},
): Promise<Map<string, { wall: Cost; cpu: Cost; perSecond: number }>> {
  for (const { op } of candidates) for (let i = 0; i < warmup; i++) await op();
  const wall = candidates.map(() => [] as number[]);
  const cpu = candidates.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < candidates.length; k++) {
      const index = (k + round) % candidates.length;
      const { op } = candidates[index]!;
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      for (let i = 0; i < count; i++) await op();
      wall[index]!.push((performance.now() - start) / count);
      const used = process.cpuUsage(cpuStart);
      cpu[index]!.push((used.user + used.system) / 1000 / count);
    }
  }
  const ratios = (series: number[][], index: number) => series[index]!.map((value, round) => value / series[0]![round]!);
  return new Map(
    candidates.map(({ name }, index) => [name, { wall: costOf(ratios(wall, index)), cpu: costOf(ratios(cpu, index)), perSecond: 1000 / median(wall[index]!) }]),
  );
}

/** The line of one paired cost: both measures, their spread, and the verdict on the wall time. */
export function costLine(label: string, cost: { wall: Cost; cpu?: Cost; perSecond?: number }, target?: number): string {
  const pct = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}%`;
  const verdict = target === undefined ? "(reported)" : `(target < ${target}%) ${cost.wall.median < target ? "OK" : "ABOVE TARGET"}`;
  const cpu = cost.cpu ? `   CPU ${pct(cost.cpu.median).padStart(7)} [${pct(cost.cpu.spread[0])} .. ${pct(cost.cpu.spread[1])}]` : "";
  const rate = cost.perSecond ? `${cost.perSecond.toFixed(0).padStart(6)} req/s  ` : "";
  return `  ${label.padEnd(46)} ${rate}time ${pct(cost.wall.median).padStart(7)} [${pct(cost.wall.spread[0])} .. ${pct(cost.wall.spread[1])}]${cpu}  ${verdict}`;
}
