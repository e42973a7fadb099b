/**
 * Counters and histograms for the request path, registered on a prom-client registry (which
 * formats and serves them) but recorded without prom-client's per-call label validation and
 * hashing: a series is found by its label values joined into one key, and recording is an array
 * increment. The labels are Trellis' own (route templates, procedure names, codes), never a
 * caller's free text, so they need no checking on each call. The hot paths go further: they keep
 * the `Series` that `series()` hands out (one per route, procedure or statement text) and record
 * into it with no lookup at all.
 */
export interface Series {
  labels: Record<string, string>;
  value: number;
  /** False once `reset()` zeroed it, until the next record: a reset series is not exported. */
  shown: boolean;
  /** Histograms: observations per bucket (not cumulative), the last one past every bound. */
  counts?: Float64Array;
  sum?: number;
}

type Sample = { labels: Record<string, string>; value: number; metricName?: string };

const keyOf = (values: readonly string[]) => (values.length === 1 ? values[0]! : values.join("\u0000"));

abstract class LabelledMetric {
  readonly aggregator = "sum";
  protected readonly all = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  abstract readonly type: "counter" | "histogram";

  /** The series of these label values (in `labelNames` order), to keep and record into. */
  series(...values: string[]): Series {
    return this.seriesOf(values);
  }

  protected seriesOf(values: readonly string[]): Series {
    const key = keyOf(values);
    let series = this.all.get(key);
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index] ?? ""));
      series = this.create(labels);
      this.all.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Record<string, string>): Series;

  /** Zeroes every series and hides it until recorded again (kept series stay valid). */
  reset(): void {
    for (const series of this.all.values()) {
      series.value = 0;
      series.shown = false;
      if (series.counts) {
        series.counts.fill(0);
        series.sum = 0;
      }
    }
  }

  protected shown(): Series[] {
    return [...this.all.values()].filter((series) => series.shown);
  }
}

export class FastCounter extends LabelledMetric {
  readonly type = "counter";

  /** Adds `by` to the series of these label values (in `labelNames` order). */
  add(by: number, ...values: string[]): void {
    this.inc(this.seriesOf(values), by);
  }

  /** Adds `by` to a series kept from `series()`. */
  inc(series: Series, by: number): void {
    series.value += by;
    series.shown = true;
  }

  protected create(labels: Record<string, string>): Series {
    return { labels, value: 0, shown: false };
  }

  get(): { name: string; help: string; type: "counter"; aggregator: string; values: Sample[] } {
    // A counter with no labels reads 0 before its first increment, as prom-client's do.
    const shown = this.shown();
    const all = this.labelNames.length === 0 && shown.length === 0 ? [{ labels: {}, value: 0 }] : shown;
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
    this.record(this.seriesOf(values), seconds);
  }

  /** Records one observation (seconds) in a series kept from `series()`. */
  record(series: Series, seconds: number): void {
    const { buckets } = this;
    let bucket = 0;
    while (bucket < buckets.length && seconds > buckets[bucket]!) bucket++;
    series.counts![bucket]!++;
    series.sum! += seconds;
    series.value++;
    series.shown = true;
  }

  protected create(labels: Record<string, string>): Series {
    return { labels, value: 0, shown: false, counts: new Float64Array(this.buckets.length + 1), sum: 0 };
  }

  get(): { name: string; help: string; type: "histogram"; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    for (const { labels, counts, sum, value } of this.shown()) {
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
