import type { AnyProcedure } from "@orpc/server";
import { describeHooks } from "../hooks.js";
import type { KernelView } from "../options.js";
import type { OrderedPlugin } from "../order.js";
import type { TieredRouter } from "../router.js";
import { STAGES } from "../stages.js";

export interface KernelDescription {
  plugins: { name: string; stage: string; dependencies: string[] }[];
  hooks: Record<string, string[]>;
  routes: readonly { tier: number; method: string; path: string }[];
  procedures: string[];
}

/** The built kernel's plugins (resolved order, stage names), hook taps, routes and procedures: `built.describe()`. */
export function describeKernel(kernel: KernelView, ordered: readonly OrderedPlugin[], router: TieredRouter, procedures: ReadonlyMap<string, AnyProcedure>): KernelDescription {
  const stageName = (stage: number) => Object.entries(STAGES).find(([, value]) => value === stage)?.[0] ?? String(stage);
  return {
    plugins: ordered.map(({ plugin, stage }) => ({
      name: plugin.name,
      stage: stageName(stage),
      dependencies: [...(plugin.dependencies ?? [])],
    })),
    hooks: describeHooks(kernel.hooks),
    routes: router.list(),
    procedures: [...procedures.keys()],
  };
}
