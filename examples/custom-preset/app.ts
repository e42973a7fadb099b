import { z } from "zod";
import { Kernel, rootBuilder, type DatabaseConfig } from "trellis/kernel";
import { rpcPreset } from "trellis/presets";

/**
 * A slim app assembled from the kernel and a subset of first-party plugins, without the `App`
 * facade: RPC and health only; no auth, no CORS.
 */
export function createSlimApp(db: DatabaseConfig) {
  const kernel = new Kernel({ name: "slim", db });
  for (const plugin of rpcPreset()) kernel.use(plugin);
  const base = rootBuilder();
  kernel.procedure("math.add", base.input(z.object({ a: z.number(), b: z.number() })).handler(({ input }) => input.a + input.b));
  kernel.route({ method: "GET", path: "/version", handler: () => ({ version: "1.0.0" }) });
  return kernel.build();
}
