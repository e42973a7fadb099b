import type { Observer, StorageOperation } from "../../kernel/index.js";
import type { AppMetrics } from "./metrics.js";
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
  // Each call makes only the closures its case needs: with metrics alone, the callbacks of one `then`.
  return {
    procedure(name, source, run) {
      const parent = tracing?.recordingParent();
      if (!parent && !metrics) return run();
      const started = performance.now();
      if (!parent) {
        return run().then(
          (output) => (recordProcedure(metrics!, name, source, seconds(started), true, output), output),
          (error: unknown) => {
            recordProcedure(metrics!, name, source, seconds(started), false);
            throw error;
          },
        );
      }
      const attributes = { "rpc.system": "orpc", "rpc.method": name, "trellis.procedure.name": name, "trellis.procedure.surface": source };
      return tracing!.within(parent, name, INTERNAL, attributes, (span) =>
        run().then(
          (output) => {
            if (source === "rpc" && isStream(output)) span.setAttribute("trellis.procedure.surface", "live");
            if (metrics) recordProcedure(metrics, name, source, seconds(started), true, output);
            return output;
          },
          (error: unknown) => {
            if (metrics) recordProcedure(metrics, name, source, seconds(started), false);
            throw error;
          },
        ),
      );
    },

    statement(sql, run) {
      const parent = tracing?.recordingParent();
      if (!parent && !metrics) return run();
      const operation = operationOf(sql);
      const started = performance.now();
      if (!parent) return settled(run, () => metrics!.statementDuration.observe(seconds(started), operation));
      // The text only: values travel as parameters and are never read here.
      const attributes = { "db.system.name": dbSystem, "db.operation.name": operation.toUpperCase(), "db.query.text": sql };
      return tracing!.within(parent, operation.toUpperCase(), CLIENT, attributes, () => settled(run, () => metrics?.statementDuration.observe(seconds(started), operation)));
    },

    connectionWait(ms) {
      metrics?.connectionWait.observe(ms / 1000);
    },

    storage(operation: StorageOperation, run, bytes) {
      const parent = tracing?.recordingParent();
      if (!parent && !metrics) return run();
      const started = performance.now();
      if (!parent) return settled(run, () => metrics!.storageDuration.observe(seconds(started), operation));
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

/**
 * A procedure's duration by name, surface and outcome; a streamed result is surface `live`;
 * `file.upload`'s stored size counts as upload bytes.
 */
function recordProcedure(metrics: AppMetrics, name: string, source: string, elapsed: number, ok: boolean, output?: unknown): void {
  if (!ok) return metrics.procedureDuration.observe(elapsed, name, source, "error");
  metrics.procedureDuration.observe(elapsed, name, source === "rpc" && isStream(output) ? "live" : source, "ok");
  if (name === "file.upload") {
    const size = (output as { size?: unknown } | undefined)?.size;
    if (typeof size === "number" && size > 0) metrics.uploadBytes.add(size);
  }
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
