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
  return {
    procedure(name, source, run) {
      const parent = tracing?.recordingParent();
      if (!parent && !metrics) return run();
      const started = performance.now();
      const done = (outcome: "ok" | "error", output?: unknown) => {
        if (!metrics) return;
        const surface = outcome === "ok" && source === "rpc" && isStream(output) ? "live" : source;
        metrics.procedureDuration.observe(seconds(started), name, surface, outcome);
        if (outcome === "ok" && name === "file.upload") {
          const size = (output as { size?: unknown } | undefined)?.size;
          if (typeof size === "number" && size > 0) metrics.uploadBytes.add(size);
        }
      };
      const observed = () =>
        run().then(
          (output) => (done("ok", output), output),
          (error: unknown) => {
            done("error");
            throw error;
          },
        );
      if (!parent) return observed();
      const attributes = { "rpc.system": "orpc", "rpc.method": name, "trellis.procedure.name": name, "trellis.procedure.surface": source };
      return tracing!.within(parent, name, INTERNAL, attributes, (span) =>
        run().then(
          (output) => {
            if (source === "rpc" && isStream(output)) span.setAttribute("trellis.procedure.surface", "live");
            done("ok", output);
            return output;
          },
          (error: unknown) => {
            done("error");
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
      const record = () => metrics?.statementDuration.observe(seconds(started), operation);
      const timed = () => settled(run, record);
      if (!parent) return timed();
      // The text only: values travel as parameters and are never read here.
      const attributes = { "db.system.name": dbSystem, "db.operation.name": operation.toUpperCase(), "db.query.text": sql };
      return tracing!.within(parent, operation.toUpperCase(), CLIENT, attributes, timed);
    },

    connectionWait(ms) {
      metrics?.connectionWait.observe(ms / 1000);
    },

    storage(operation: StorageOperation, run, bytes) {
      const parent = tracing?.recordingParent();
      if (!parent && !metrics) return run();
      const started = performance.now();
      const record = () => metrics?.storageDuration.observe(seconds(started), operation);
      const timed = () => settled(run, record);
      if (!parent) return timed();
      // The storage key stays out: it is the server's secret name for the bytes.
      const attributes: Record<string, string | number> = { "trellis.storage.operation": operation };
      if (bytes !== undefined) attributes["trellis.storage.bytes"] = bytes;
      return tracing!.within(parent, `storage ${operation}`, CLIENT, attributes, (span) =>
        timed().then((result) => {
          if (result instanceof Uint8Array) span.setAttribute("trellis.storage.bytes", result.byteLength);
          return result;
        }),
      );
    },
  };
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
