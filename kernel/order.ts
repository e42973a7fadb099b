import { STAGES } from "./stages.js";
import { TrellisError } from "./errors.js";
import type { AppPlugin } from "./plugin.js";

export interface OrderedPlugin {
  plugin: AppPlugin;
  stage: number;
  /** Registration index: the tie-breaker within a stage. */
  index: number;
}

/**
 * Resolves plugin order once, at build: a topological sort over `dependencies`, ties broken by stage
 * then registration order. A missing dependency or a cycle is one error naming every plugin involved.
 */
export function resolveOrder(plugins: readonly AppPlugin[]): OrderedPlugin[] {
  const entries = plugins.map((plugin, index) => ({ plugin, index, stage: STAGES[plugin.stage ?? "user"] }));
  const byName = new Map(entries.map((entry) => [entry.plugin.name, entry]));
  const missing: string[] = [];
  for (const { plugin } of entries) {
    for (const dep of plugin.dependencies ?? []) {
      if (!byName.has(dep)) missing.push(`plugin "${plugin.name}" depends on "${dep}", which is not registered`);
    }
  }
  if (missing.length) throw new TrellisError("KERNEL_MISSING_DEPENDENCY", missing.join("; "));

  const compare = (a: OrderedPlugin, b: OrderedPlugin) => a.stage - b.stage || a.index - b.index;
  // Optional dependencies order like required ones when present, and are dropped when absent.
  const pending = new Map(
    entries.map((entry) => [
      entry.plugin.name,
      new Set([...(entry.plugin.dependencies ?? []), ...(entry.plugin.optionalDependencies ?? []).filter((name) => byName.has(name))]),
    ]),
  );
  const ordered: OrderedPlugin[] = [];
  while (pending.size > 0) {
    const ready = entries.filter((entry) => pending.get(entry.plugin.name)?.size === 0).sort(compare);
    if (ready.length === 0) {
      throw new TrellisError(
        "KERNEL_DEPENDENCY_CYCLE",
        `Plugin dependencies form a cycle between: ${[...pending.keys()].join(", ")}`,
      );
    }
    const next = ready[0];
    ordered.push(next);
    pending.delete(next.plugin.name);
    for (const deps of pending.values()) deps.delete(next.plugin.name);
  }
  return ordered;
}
