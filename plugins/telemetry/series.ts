/**
 * Counters and histograms for the request path, registered on a prom-client registry (which
 * formats and serves them) but recorded without prom-client's per-call label validation and
 * hashing: a series is found by its label values joined into one key, and recording is an array
 * increment. The labels are Trellis' own (route templates, procedure names, codes), never a
 * caller's free text, so they need no checking on each call.
 */
interface Series {
  labels: Record<string, string>;
  value: number;
  /** Histograms: observations per bucket (not cumulative), the last one past every bound. */
  counts?: Float64Array;
  sum?: number;
}

type Sample = { labels: Record<string, string>; value: number; metricName?: string };

const keyOf = (values: readonly string[]) => (values.length === 1 ? values[0]! : values.join("\u0000"));

abstract class LabelledMetric {
  readonly aggregator = "sum";
  protected readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  abstract readonly type: "counter" | "histogram";

  protected seriesOf(values: readonly string[]): Series {
    const key = keyOf(values);
    let series = this.series.get(key);
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index] ?? ""));
      series = this.create(labels);
      this.series.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Record<string, string>): Series;

  reset(): void {
    this.series.clear();
  }
}

export class FastCounter extends LabelledMetric {
  readonly type = "counter";

  /** Adds `by` to the series of these label values (in `labelNames` order). */
  add(by: number, ...values: string[]): void {
    this.seriesOf(values).value += by;
  }

  protected create(labels: Record<string, string>): Series {
    return { labels, value: 0 };
  }

  get(): { name: string; help: string; type: "counter"; aggregator: string; values: Sample[] } {
    // A counter with no labels reads 0 before its first increment, as prom-client's do.
    const all = this.labelNames.length === 0 && this.series.size === 0 ? [{ labels: {}, value: 0 }] : [...this.series.values()];
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: all.map(({ labels, value }) => ({ labels, value })) };
  }
}

export class FastHistogram extends LabelledMetric {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  /** Records one observation (seconds) in the series of these label values. */
  observe(seconds: number, ...values: string[]): void {
    const series = this.seriesOf(values);
    const { buckets } = this;
    let bucket = 0;
    while (bucket < buckets.length && seconds > buckets[bucket]!) bucket++;
    series.counts![bucket]!++;
    series.sum! += seconds;
    series.value++;
  }

  protected create(labels: Record<string, string>): Series {
    return { labels, value: 0, counts: new Float64Array(this.buckets.length + 1), sum: 0 };
  }

  get(): { name: string; help: string; type: "histogram"; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    for (const { labels, counts, sum, value } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += counts![index]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: String(bound), ...labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", ...labels }, value });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum! });
      values.push({ metricName: `${this.name}_count`, labels, value });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
