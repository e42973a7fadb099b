import type { Observer, StorageOperation } from "../../kernel/index.js";
import type { AppMetrics } from "./metrics.js";
import type { FastHistogram, Series } from "./series.js";
import type { Tracing } from "./tracing.js";

/** OpenTelemetry's `SpanKind`, as numbers: the API may not be installed when metrics alone are on. */
const INTERNAL = 0;
const CLIENT = 2;

const OPERATIONS = new Map([
  ["select", "select"],
  ["insert", "insert"],
  ["update", "update"],
  ["delete", "delete"],
]);
const WRITE = /\b(insert|update|delete)\b/i;
/** Statement texts whose series is kept: an app's queries are a bounded set, a runaway one is not kept past this. */
const KEPT_STATEMENTS = 1000;

/**
 * The statement's operation, a label with a handful of values: its first keyword, or for a
 * `with` query the write it ends in (a select when it has none). Read by hand, not by a regular
 * expression over the whole text: every statement passes here.
 */
export function operationOf(sql: string): string {
  let start = 0;
  while (start < sql.length && sql.charCodeAt(start) <= 32) start++;
  let end = start;
  while (end < sql.length && end - start < 7 && sql.charCodeAt(end) > 32 && sql.charCodeAt(end) !== 40) end++;
  const word = sql.slice(start, end).toLowerCase();
  if (word === "with") return WRITE.exec(sql)?.[1]!.toLowerCase() ?? "select";
  return OPERATIONS.get(word) ?? "other";
}

function isStream(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";
}

/**
 * The kernel observer the telemetry plugin adds: a span per procedure, statement and storage call
 * (under the request's span), and their durations in the metrics. The surface of a procedure whose
 * output is a stream is `live`.
 */
export function telemetryObserver(tracing: Tracing | undefined, metrics: AppMetrics | undefined, dbSystem: string): Observer {
  const seconds = (started: number) => (performance.now() - started) / 1000;
  // Each statement text's series, kept: a statement neither reads its text nor builds a label.
  const statements = new Map<string, Series>();
  const statementSeries = (metrics: AppMetrics, sql: string): Series => {
    let series = statements.get(sql);
    if (series) return series;
    series = metrics.statementDuration.series(operationOf(sql));
    if (statements.size < KEPT_STATEMENTS) statements.set(sql, series);
    return series;
  };
  const procedures = new Map<string, ProcedureSeries>();
  const procedureSeries = (metrics: AppMetrics, name: string, source: string): ProcedureSeries => {
    const key = source === "rpc" ? name : `${name}\u0000${source}`;
    let series = procedures.get(key);
    if (!series) procedures.set(key, (series = keepProcedure(metrics, name, source)));
    return series;
  };
  // Each call makes only the closures its case needs: with metrics alone, the callbacks of one `then`.
  return {
    procedure(name, source, run) {
      const parent = tracing?.recordingParent();
      if (!parent && !metrics) return run();
      const started = performance.now();
      if (!parent) {
        const series = procedureSeries(metrics!, name, source);
        // Recorded beside the caller's own reaction, not in front of it: no extra turn per call.
        const result = run();
        result.then(
          (output) => recordProcedure(metrics!, series, name, source, seconds(started), output),
          () => metrics!.procedureDuration.record(series.error, seconds(started)),
        );
        return result;
      }
      const attributes = { "rpc.system": "orpc", "rpc.method": name, "trellis.procedure.name": name, "trellis.procedure.surface": source };
      return tracing!.within(parent, name, INTERNAL, attributes, (span) =>
        run().then(
          (output) => {
            if (source === "rpc" && isStream(output)) span.setAttribute("trellis.procedure.surface", "live");
            if (metrics) recordProcedure(metrics, procedureSeries(metrics, name, source), name, source, seconds(started), output);
            return output;
          },
          (error: unknown) => {
            if (metrics) metrics.procedureDuration.record(procedureSeries(metrics, name, source).error, seconds(started));
            throw error;
          },
        ),
      );
    },

    statement(sql, run) {
      const parent = tracing?.recordingParent();
      if (!parent) return metrics ? timed(run, metrics.statementDuration, statementSeries(metrics, sql)) : run();
      const operation = operationOf(sql);
      const started = performance.now();
      // The text only: values travel as parameters and are never read here.
      const attributes = { "db.system.name": dbSystem, "db.operation.name": operation.toUpperCase(), "db.query.text": sql };
      return tracing!.within(parent, operation.toUpperCase(), CLIENT, attributes, () => settled(run, () => metrics?.statementDuration.observe(seconds(started), operation)));
    },

    // Only with metrics: without this member the kernel does not time the connection's wait.
    // Its one series kept: no label array or key per statement.
    connectionWait: metrics && ((wait) => (ms: number) => metrics.connectionWait.record(wait, ms / 1000))(metrics.connectionWait.series()),

    storage(operation: StorageOperation, run, bytes) {
      const parent = tracing?.recordingParent();
      if (!parent) return metrics ? timed(run, metrics.storageDuration, metrics.storageDuration.series(operation)) : run();
      const started = performance.now();
      // The storage key stays out: it is the server's secret name for the bytes.
      const attributes: Record<string, string | number> = { "trellis.storage.operation": operation };
      if (bytes !== undefined) attributes["trellis.storage.bytes"] = bytes;
      return tracing!.within(parent, `storage ${operation}`, CLIENT, attributes, (span) =>
        settled(run, () => metrics?.storageDuration.observe(seconds(started), operation)).then((result) => {
          if (result instanceof Uint8Array) span.setAttribute("trellis.storage.bytes", result.byteLength);
          return result;
        }),
      );
    },
  };
}

/** A procedure's duration series by outcome, and for a streamed result (surface `live`). */
interface ProcedureSeries {
  ok: Series;
  live: Series;
  error: Series;
}

function keepProcedure(metrics: AppMetrics, name: string, source: string): ProcedureSeries {
  const histogram = metrics.procedureDuration;
  return { ok: histogram.series(name, source, "ok"), live: histogram.series(name, "live", "ok"), error: histogram.series(name, source, "error") };
}

/** A procedure's successful run: its duration (a streamed result is surface `live`); `file.upload`'s stored size counts as upload bytes. */
function recordProcedure(metrics: AppMetrics, series: ProcedureSeries, name: string, source: string, elapsed: number, output: unknown): void {
  metrics.procedureDuration.record(source === "rpc" && isStream(output) ? series.live : series.ok, elapsed);
  if (name === "file.upload") {
    const size = (output as { size?: unknown } | undefined)?.size;
    if (typeof size === "number" && size > 0) metrics.uploadBytes.add(size);
  }
}

/**
 * Runs `run` and records its duration in `series` whether it resolved or threw, by a reaction
 * beside the caller's: the caller gets `run`'s own promise, with no turn of the queue added.
 */
function timed<T>(run: () => Promise<T>, histogram: FastHistogram, series: Series): Promise<T> {
  const started = performance.now();
  const result = run();
  const record = () => histogram.record(series, (performance.now() - started) / 1000);
  result.then(record, record);
  return result;
}

/** Runs `run`, then `record` whether it resolved or threw (the duration is wanted either way). */
function settled<T>(run: () => Promise<T>, record: () => void): Promise<T> {
  return run().then(
    (result) => (record(), result),
    (error: unknown) => {
      record();
      throw error;
    },
  );
}
