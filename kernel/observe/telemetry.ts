/**
 * The shape of the `telemetry` service (provided by the telemetry plugin): declared in the kernel so
 * any plugin can use it through `ctx.want("telemetry")` without importing the plugin's files.
 */
import type { Attributes, Span, SpanContext, SpanKind, Tracer } from "@opentelemetry/api";
import type { Counter, CounterConfiguration, Gauge, GaugeConfiguration, Histogram, HistogramConfiguration, Registry } from "prom-client";

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
