import type { AppPlugin } from "../kernel/index.js";
import { bodyLimitPlugin } from "../plugins/body-limit/index.js";
import { corsPlugin, type CorsConfig } from "../plugins/cors/index.js";
import { healthPlugin, type HealthConfig } from "../plugins/health/index.js";
import { rateLimitPlugin, type RateLimitConfig } from "../plugins/rate-limit/index.js";
import { telemetryPlugin, type TelemetryConfig } from "../plugins/telemetry/index.js";

export interface PresetOptions {
  cors?: CorsConfig;
  health?: HealthConfig;
  /** Largest request body in bytes (413 beyond). @default 1048576 */
  bodyLimit?: number;
  /** Per-caller limit on `/rpc/**`, `/rest/**` and the MCP endpoint. Off by default. */
  rateLimit?: RateLimitConfig;
  /** Traces (when an OpenTelemetry SDK is registered) and `/metrics` (off by default); `false` drops the plugin. */
  telemetry?: TelemetryConfig | false;
}

/**
 * The plugins `App` registers at construction, in this order. Features the user turns on later
 * (`.auth()`, `.resource()`, ...) register their plugins at that call; the kernel orders them all
 * by stage at build, so the call order never matters.
 */
export function defaultPreset(options: PresetOptions, limitedPaths?: readonly string[]): AppPlugin[] {
  const plugins: AppPlugin[] = [];
  // First of all: its request span and timings wrap every other plugin's work, 429s and 404s included.
  if (options.telemetry !== false) plugins.push(telemetryPlugin(options.telemetry));
  plugins.push(corsPlugin(options.cors));
  // After CORS (a 429 must be readable by the browser), before the body limit reads anything.
  // `limitedPaths` is read when the app is built, so surfaces registered later (`.mcp({ path })`) are in it.
  if (options.rateLimit) plugins.push(rateLimitPlugin(options.rateLimit, { paths: limitedPaths }));
  plugins.push(bodyLimitPlugin({ maxBytes: options.bodyLimit }));
  if (options.health !== false) plugins.push(healthPlugin(options.health === true ? undefined : options.health));
  return plugins;
}
