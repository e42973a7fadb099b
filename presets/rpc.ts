import type { AppPlugin } from "../kernel/index.js";
import { healthPlugin } from "../plugins/health/index.js";

/** A slim preset: RPC and health, no CORS, no auth. Use it with a bare `Kernel`. */
export function rpcPreset(): AppPlugin[] {
  return [healthPlugin()];
}
