import type { AppPlugin } from "../kernel/index.js";
import { bodyLimitPlugin } from "../plugins/body-limit/index.js";
import { corsPlugin, type CorsConfig } from "../plugins/cors/index.js";
import { healthPlugin, type HealthConfig } from "../plugins/health/index.js";

export interface PresetOptions {
  cors?: CorsConfig;
  health?: HealthConfig;
  /** Largest request body in bytes (413 beyond). @default 1048576 */
  bodyLimit?: number;
}

/**
 * The plugins `App` registers at construction, in this order. Features the user turns on later
 * (`.auth()`, `.resource()`, ...) register their plugins at that call; the kernel orders them all
 * by stage at build, so the call order never matters.
 */
export function defaultPreset(options: PresetOptions): AppPlugin[] {
  const plugins: AppPlugin[] = [corsPlugin(options.cors), bodyLimitPlugin({ maxBytes: options.bodyLimit })];
  if (options.health !== false) plugins.push(healthPlugin(options.health === true ? undefined : options.health));
  return plugins;
}
