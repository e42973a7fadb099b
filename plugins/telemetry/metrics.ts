import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Prom } from "./peers.js";
import type { ResolvedMetrics } from "./options.js";

/** Seconds; from a fast cached read to a slow report. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Statements and connection waits are shorter: the embedded database answers in microseconds. */
const DB_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * Every metric Trellis exports, by name: docs/observability.md and its dashboard name only these
 * (a test checks it), plus prom-client's process metrics (`process_*`, `nodejs_*`).
 */
export const METRIC_NAMES = [
  "trellis_http_requests_total",
  "trellis_http_request_duration_seconds",
  "trellis_procedure_duration_seconds",
  "trellis_errors_total",
  "trellis_db_statement_duration_seconds",
  "trellis_db_connection_wait_seconds",
  "trellis_storage_duration_seconds",
  "trellis_live_subscribers",
  "trellis_rate_limit_rejections_total",
  "trellis_upload_bytes_total",
] as const;

/** The app's metrics in one prom-client registry. */
export class AppMetrics {
  readonly registry: Registry;
  readonly requests: Counter<"method" | "route" | "status">;
  readonly requestDuration: Histogram<"method" | "route" | "status">;
  readonly procedureDuration: Histogram<"procedure" | "surface" | "outcome">;
  readonly errors: Counter<"code" | "surface">;
  readonly statementDuration: Histogram<"operation">;
  readonly connectionWait: Histogram;
  readonly storageDuration: Histogram<"operation">;
  readonly liveSubscribers: Gauge;
  readonly rateLimitRejections: Counter;
  readonly uploadBytes: Counter;

  constructor(prom: Prom, options: ResolvedMetrics, liveSubscribers: () => number) {
    const registers = [(this.registry = options.registry ?? new prom.Registry())];
    this.requests = new prom.Counter({ name: "trellis_http_requests_total", help: "HTTP requests answered, by route template and status", labelNames: ["method", "route", "status"], registers });
    this.requestDuration = new prom.Histogram({
      name: "trellis_http_request_duration_seconds",
      help: "Time to answer an HTTP request (until the response headers), by route template and status",
      labelNames: ["method", "route", "status"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.procedureDuration = new prom.Histogram({
      name: "trellis_procedure_duration_seconds",
      help: "Time a procedure took, by name and surface (rpc, rest, mcp, live, route)",
      labelNames: ["procedure", "surface", "outcome"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.errors = new prom.Counter({ name: "trellis_errors_total", help: "Error answers, by error code and surface", labelNames: ["code", "surface"], registers });
    this.statementDuration = new prom.Histogram({
      name: "trellis_db_statement_duration_seconds",
      help: "Time a SQL statement took, by operation (select, insert, update, delete, other)",
      labelNames: ["operation"],
      buckets: DB_BUCKETS,
      registers,
    });
    this.connectionWait = new prom.Histogram({
      name: "trellis_db_connection_wait_seconds",
      help: "Time a statement waited for a database connection (the embedded database's queue)",
      buckets: DB_BUCKETS,
      registers,
    });
    this.storageDuration = new prom.Histogram({
      name: "trellis_storage_duration_seconds",
      help: "Time a storage call took, by operation (get, set, delete)",
      labelNames: ["operation"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.liveSubscribers = new prom.Gauge({
      name: "trellis_live_subscribers",
      help: "Open live-query subscriptions",
      registers,
      collect() {
        this.set(liveSubscribers());
      },
    });
    this.rateLimitRejections = new prom.Counter({ name: "trellis_rate_limit_rejections_total", help: "Requests refused by the rate limit (429)", registers });
    this.uploadBytes = new prom.Counter({ name: "trellis_upload_bytes_total", help: "Bytes of files uploaded through file.upload", registers });
    if (options.processMetrics) prom.collectDefaultMetrics({ register: this.registry });
  }
}
