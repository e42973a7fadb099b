import { TrellisError, definePlugin, type AppPlugin, type SealedApp } from "../../kernel/index.js";
import { TELEMETRY_BAD_OPTION, TELEMETRY_PEER_MISSING } from "./errors.js";
import { AppMetrics } from "./metrics.js";
import { metricsRoute } from "./metrics-route.js";
import { telemetryObserver } from "./observers.js";
import { configProblems, resolveMetrics, type TelemetryConfig } from "./options.js";
import { loadOtel, loadProm } from "./peers.js";
import { requestObserver } from "./request.js";
import { telemetryService } from "./service.js";
import type { Telemetry } from "../../kernel/index.js";
import { Tracing } from "./tracing.js";

export type { TelemetryConfig, MetricsConfig } from "./options.js";
export type { Telemetry, SpanOptions } from "../../kernel/index.js";
export { METRIC_NAMES } from "./metrics.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Spans and metrics for plugins and procedures (`context.telemetry`); see docs/observability.md. */
    telemetry: Telemetry;
  }
  interface AppRpcContext<TDB = any> {
    /** Spans and metrics (the telemetry plugin's service); undefined when a preset leaves the plugin out. */
    telemetry?: Telemetry;
  }
}

/**
 * Traces and metrics. Stage `edge`, registered first by the default preset, so its request span
 * and timings wrap everything else (CORS, the rate limit's 429s, the routes); procedures, SQL
 * statements and storage calls are seen through the kernel's instrumentation, never by editing
 * the plugins that run them.
 */
export function telemetryPlugin(config: TelemetryConfig = {}): AppPlugin {
  const metricsOptions = resolveMetrics(config);
  return definePlugin({
    name: "telemetry",
    stage: "edge",
    validate(ctx) {
      const problems = configProblems(config, metricsOptions);
      if (problems.length > 0) throw new TrellisError(TELEMETRY_BAD_OPTION, `telemetry: ${problems.join("; ")}`, { plugin: "telemetry", hook: "validate" });
      const missing = [config.traces === true && !loadOtel() && "@opentelemetry/api", metricsOptions && !loadProm() && "prom-client"].filter(Boolean);
      if (missing.length > 0) {
        throw new TrellisError(TELEMETRY_PEER_MISSING, `telemetry needs the optional package${missing.length > 1 ? "s" : ""} ${missing.join(" and ")}, not installed. Install: npm install ${missing.join(" ")}`, {
          plugin: "telemetry",
          hook: "validate",
        });
      }
      if (metricsOptions && metricsOptions.token === undefined) ctx.requireSession(`telemetry metrics at ${metricsOptions.path} (a session with one of the roles ${metricsOptions.roles.join(", ")}, or set metrics.token)`);
    },
    build(ctx) {
      const api = config.traces === false ? undefined : loadOtel();
      const tracing = api ? new Tracing(api) : undefined;
      const prom = metricsOptions ? loadProm() : undefined;
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      const metrics = prom && metricsOptions ? new AppMetrics(prom, metricsOptions, () => sealed?.liveStats().subscribers ?? 0) : undefined;
      ctx.provide("telemetry", telemetryService(tracing, metrics, prom), { context: true });
      if (!tracing && !metrics) return;
      if (metrics) {
        ctx.hooks.close.tap(async () => {
          metrics.stop();
          if (!metricsOptions?.registry) metrics.registry.clear();
        });
      }
      // The facade provides the instrumentation; a bare kernel without it still gets request spans and metrics.
      ctx.want("instrumentation")?.add(telemetryObserver(tracing, metrics, ctx.resources.kind === "postgres" ? "postgresql" : "sqlite"));
      const middleware = requestObserver({ tracing, metrics, userId: config.userId ?? false, isProcedure: (name) => sealed?.procedures.has(name) ?? false, sealed: () => sealed });
      return { middleware: [middleware], routes: metrics ? [metricsRoute(metricsOptions!, metrics)] : [] };
    },
  });
}
