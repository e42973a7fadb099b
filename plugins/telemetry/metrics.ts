import type { Gauge, Registry } from "prom-client";
import type { Prom } from "./peers.js";
import type { ResolvedMetrics } from "./options.js";
import { FastCounter, FastHistogram } from "./series.js";
import { processMetrics } from "./process-metrics.js";

/** Seconds; from a fast cached read to a slow report. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Statements and connection waits are shorter: the embedded database answers in microseconds. */
const DB_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * Every metric Trellis exports, by name: docs/observability.md and its dashboard name only these
 * (a test checks it), plus the process metrics (`process_*`, `nodejs_*`, process-metrics.ts) and,
 * with `.jobs()`, the jobs plugin's `trellis_job_*` (plugins/jobs/telemetry.ts).
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

/** The app's metrics in one prom-client registry; the request path's are `series.ts`'s. */
export class AppMetrics {
  readonly registry: Registry;
  /** `method`, `route`, `status`. */
  readonly requests = new FastCounter("trellis_http_requests_total", "HTTP requests answered, by route template and status", ["method", "route", "status"]);
  readonly requestDuration = new FastHistogram(
    "trellis_http_request_duration_seconds",
    "Time to answer an HTTP request (until the response headers), by route template and status",
    ["method", "route", "status"],
    DURATION_BUCKETS,
  );
  /** `procedure`, `surface`, `outcome`. */
  readonly procedureDuration = new FastHistogram(
    "trellis_procedure_duration_seconds",
    "Time a procedure took, by name and surface (rpc, rest, mcp, live, route) and outcome (ok, error)",
    ["procedure", "surface", "outcome"],
    DURATION_BUCKETS,
  );
  /** `code`, `surface`. */
  readonly errors = new FastCounter("trellis_errors_total", "Error answers, by error code and surface", ["code", "surface"]);
  /** `operation`. */
  readonly statementDuration = new FastHistogram("trellis_db_statement_duration_seconds", "Time a SQL statement took, by operation (select, insert, update, delete, other)", ["operation"], DB_BUCKETS);
  readonly connectionWait = new FastHistogram("trellis_db_connection_wait_seconds", "Time a statement waited for a database connection (the embedded database's queue)", [], DB_BUCKETS);
  /** `operation`. */
  readonly storageDuration = new FastHistogram("trellis_storage_duration_seconds", "Time a storage call took, by operation (get, set, delete)", ["operation"], DURATION_BUCKETS);
  readonly rateLimitRejections = new FastCounter("trellis_rate_limit_rejections_total", "Requests refused by the rate limit (429)", []);
  readonly uploadBytes = new FastCounter("trellis_upload_bytes_total", "Bytes of files uploaded through file.upload", []);
  readonly liveSubscribers: Gauge;
  /** Stops what the process metrics watch (the event-loop delay histogram). */
  readonly stop: () => void;

  constructor(prom: Prom, options: ResolvedMetrics, liveSubscribers: () => number) {
    const registry = (this.registry = options.registry ?? new prom.Registry());
    for (const metric of [this.requests, this.requestDuration, this.procedureDuration, this.errors, this.statementDuration, this.connectionWait, this.storageDuration, this.rateLimitRejections, this.uploadBytes]) {
      registry.registerMetric(metric as never);
    }
    this.liveSubscribers = new prom.Gauge({
      name: "trellis_live_subscribers",
      help: "Open live-query subscriptions",
      registers: [registry],
      collect() {
        this.set(liveSubscribers());
      },
    });
    this.stop = options.processMetrics ? processMetrics(prom, registry) : () => {};
  }
}
