import { declaredPermission, type ResourceRegistry } from "../../../kernel/index.js";
import { say, table } from "../output.js";
import { onApp } from "../app-target.js";
import type { CommandTarget } from "../control/commands.js";

/**
 * Where each procedure is reachable, from the app's own router: RPC always, REST and MCP when
 * mounted. The app is built, never started: its embedded database is not opened, so this works
 * beside a running server too.
 */
export function routes(): Promise<number> {
  return onApp("routes", {}, routesOn, { database: false });
}

export async function routesOn({ built }: CommandTarget): Promise<number> {
  const described = built.describe() as { routes: readonly { method: string; path: string }[]; procedures: string[] };
  const procedures = built.sealed.procedures as ReadonlyMap<string, any>;
  const mounted = (prefix: string) => described.routes.some((route) => route.path === prefix || route.path.startsWith(`${prefix}/`));
  const rest = mounted("/rest");
  const mcp = mounted("/mcp");
  // Resource actions check their rule inside the handler; the registry says which rule.
  const resourceRules = new Map<string, string>();
  for (const info of (built.sealed.service("resource-registry") as ResourceRegistry | undefined)?.values() ?? []) {
    for (const [action, name] of Object.entries(info.procedures)) resourceRules.set(name!, info.permissions[action as keyof typeof info.permissions] ?? info.permissions.list);
  }
  const rows: string[][] = [];
  for (const name of described.procedures) {
    const procedure = procedures.get(name);
    const meta = (procedure?.["~orpc"]?.meta ?? {}) as Record<string, unknown>;
    const surfaces = [`POST /rpc/${name.replaceAll(".", "/")}`];
    if (rest && !name.startsWith("_admin.") && !name.endsWith(".live")) surfaces.push("REST");
    if (mcp && meta.mcp) surfaces.push("MCP");
    rows.push(["procedure", name, resourceRules.get(name) ?? (procedure ? declaredPermission(procedure) : "public"), surfaces.join(", ")]);
  }
  for (const route of described.routes) {
    if (route.path === "/rpc/**") continue;
    rows.push(["route", `${route.method} ${route.path}`, "", ""]);
  }
  say(table([["kind", "name", "permission", "surfaces"], ...rows]));
  return 0;
}
