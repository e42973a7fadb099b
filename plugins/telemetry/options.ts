import type { Registry } from "prom-client";

export interface TelemetryConfig {
  /**
   * Spans through `@opentelemetry/api`, exported by whatever SDK the app registers. `"auto"` traces
   * when the package is installed and a tracer provider is registered (checked per request, so an
   * SDK registered after the app was built is picked up); `true` also fails the build when the
   * package is missing; `false` never traces.
   * @default "auto"
   */
  traces?: boolean | "auto";
  /**
   * Put the signed-in user's id on the request's span (`enduser.id`). Only a session already
   * resolved for the request is read: this never causes a lookup.
   * @default false
   */
  userId?: boolean;
  /**
   * Prometheus metrics at `GET /metrics` (needs `prom-client`). Off by default; `true` is `{}`,
   * which needs `.auth()`: the endpoint answers only a session with one of `roles`, or the bearer
   * `token` when one is set.
   * @default false
   */
  metrics?: boolean | MetricsConfig;
}

export interface MetricsConfig {
  /**
   * Where the Prometheus text is served.
   * @default "/metrics"
   */
  path?: string;
  /**
   * A bearer token a scraper sends (`Authorization: Bearer <token>`). Without one the endpoint
   * needs a signed-in session with one of `roles` (and so `.auth()`).
   */
  token?: string;
  /**
   * Roles whose session may read the endpoint.
   * @default ["admin"]
   */
  roles?: string[];
  /**
   * The registry metrics are kept in; pass prom-client's global `register` to serve your own
   * metrics beside Trellis' on the same page.
   * @default a registry of the app's own
   */
  registry?: Registry;
  /**
   * Process metrics, read when scraped: resident memory, heap, CPU and event-loop lag (named as
   * prom-client's). For prom-client's full set (GC durations, handles) call its
   * `collectDefaultMetrics({ register })` on a `registry` you pass; watching every GC has a cost.
   * @default true
   */
  processMetrics?: boolean;
}

export interface ResolvedMetrics {
  path: string;
  token: string | undefined;
  roles: string[];
  registry: Registry | undefined;
  processMetrics: boolean;
}

export function resolveMetrics(config: TelemetryConfig): ResolvedMetrics | undefined {
  if (!config.metrics) return undefined;
  const metrics = config.metrics === true ? {} : config.metrics;
  return {
    path: metrics.path ?? "/metrics",
    token: metrics.token,
    roles: metrics.roles ?? ["admin"],
    registry: metrics.registry,
    processMetrics: metrics.processMetrics ?? true,
  };
}

/** The problems of a configuration, in words (empty when it is sound). */
export function configProblems(config: TelemetryConfig, metrics: ResolvedMetrics | undefined): string[] {
  const problems: string[] = [];
  if (config.traces !== undefined && config.traces !== "auto" && typeof config.traces !== "boolean") {
    problems.push(`traces must be true, false or "auto", got ${JSON.stringify(config.traces)}`);
  }
  if (!metrics) return problems;
  if (!metrics.path.startsWith("/")) problems.push(`metrics.path must start with "/", got "${metrics.path}"`);
  if (metrics.token !== undefined && (typeof metrics.token !== "string" || metrics.token.length < 16)) {
    problems.push("metrics.token must be a string of at least 16 characters");
  }
  if (!Array.isArray(metrics.roles) || metrics.roles.length === 0) problems.push("metrics.roles must name at least one role");
  return problems;
}
