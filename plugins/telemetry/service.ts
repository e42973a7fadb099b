import type { Attributes, Span, SpanContext, SpanKind, Tracer } from "@opentelemetry/api";
import type { Counter, CounterConfiguration, Gauge, GaugeConfiguration, Histogram, HistogramConfiguration, Registry } from "prom-client";
import type { AppMetrics } from "./metrics.js";
import type { Prom } from "./peers.js";
import type { Tracing } from "./tracing.js";

export interface SpanOptions {
  attributes?: Attributes;
  /** @default SpanKind.INTERNAL */
  kind?: SpanKind;
  /**
   * A trace of its own, whatever span is active: for work that runs apart from the request that
   * caused it (a job run, a delivery after the answer). Recorded whenever an SDK is registered;
   * tie it to its cause with `links`.
   */
  root?: boolean;
  /** Spans this one follows from (OpenTelemetry links), e.g. `spanContext()` saved when the work was queued. */
  links?: SpanContext[];
}

/**
 * What the telemetry plugin offers other plugins (`ctx.want("telemetry")`) and procedures
 * (`context.telemetry`): spans that join the request's trace, and metrics served at `/metrics`.
 * Every member works when tracing or metrics are off; it then does nothing.
 */
export interface Telemetry {
  /** The tracer Trellis' own spans come from; undefined when `@opentelemetry/api` is not installed or traces are off. */
  readonly tracer: Tracer | undefined;
  /**
   * Runs `fn` in a span, a child of the active one (the request's, or the procedure's), ended when
   * `fn` settles and marked failed with the error's code when it throws. Without a recording
   * parent (no SDK, not sampled) `fn` runs with `undefined` and nothing is recorded.
   */
  span<T>(name: string, fn: (span: Span | undefined) => Promise<T>, options?: SpanOptions): Promise<T>;
  /** The active span's context when it is recording (to link later work to it), else undefined. */
  spanContext(): SpanContext | undefined;
  /** The registry `/metrics` serves; undefined when metrics are off. */
  readonly registry: Registry | undefined;
  /** A counter on the app's registry (a no-op when metrics are off). Name it `<app or plugin>_<what>_total`. */
  counter<L extends string = string>(config: Omit<CounterConfiguration<L>, "registers">): Pick<Counter<L>, "inc">;
  /** A histogram on the app's registry (a no-op when metrics are off); durations in seconds. */
  histogram<L extends string = string>(config: Omit<HistogramConfiguration<L>, "registers">): Pick<Histogram<L>, "observe" | "startTimer">;
  /** A gauge on the app's registry (a no-op when metrics are off); `collect()` may set it at scrape time. */
  gauge<L extends string = string>(config: Omit<GaugeConfiguration<L>, "registers">): Pick<Gauge<L>, "set" | "inc" | "dec">;
}

const INTERNAL = 0;
const noop = () => {};
const NO_COUNTER = Object.freeze({ inc: noop });
const NO_GAUGE = Object.freeze({ set: noop, inc: noop, dec: noop });
const NO_HISTOGRAM = Object.freeze({ observe: noop, startTimer: () => () => 0 });

export function telemetryService(tracing: Tracing | undefined, metrics: AppMetrics | undefined, prom: Prom | undefined): Telemetry {
  const registers = metrics ? [metrics.registry] : [];
  return Object.freeze({
    tracer: tracing?.tracer,
    span<T>(name: string, fn: (span: Span | undefined) => Promise<T>, options: SpanOptions = {}): Promise<T> {
      const parent = !tracing ? undefined : options.root ? tracing.enabled() && tracing.api.ROOT_CONTEXT : tracing.recordingParent();
      if (!parent) return fn(undefined);
      return tracing!.within(parent, name, options.kind ?? INTERNAL, options.attributes ?? {}, fn, options.links);
    },
    spanContext() {
      const parent = tracing?.recordingParent();
      return parent && tracing!.api.trace.getSpanContext(parent);
    },
    registry: metrics?.registry,
    counter: (config) => (prom && metrics ? new prom.Counter({ ...config, registers }) : NO_COUNTER),
    histogram: (config) => (prom && metrics ? new prom.Histogram({ ...config, registers }) : NO_HISTOGRAM),
    gauge: (config) => (prom && metrics ? new prom.Gauge({ ...config, registers }) : NO_GAUGE),
  } as Telemetry);
}
