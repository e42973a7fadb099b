import type { Span } from "@opentelemetry/api";
import type { SpanOptions, Telemetry } from "../../kernel/index.js";
import type { AppMetrics } from "./metrics.js";
import type { Prom } from "./peers.js";
import type { Tracing } from "./tracing.js";

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
