import { declaredPermission } from "../../../kernel/introspection/access.js";
import { say, table } from "../output.js";
import { onApp } from "../app-target.js";
import type { CommandTarget } from "../control/commands.js";

/** A row of `trellis routes`: kind, name, permission (as `declaredPermission` reads it), surfaces. */
export type RouteRow = [kind: "procedure" | "route", name: string, permission: string, surfaces: string];

/**
 * Where each procedure is reachable, from the built app's own router: RPC always, REST and MCP when
 * mounted; its permission is the one every surface reports (`declaredPermission`).
 */
export function routeTable(built: { describe(): unknown; sealed: { procedures: ReadonlyMap<string, any> } }): RouteRow[] {
  const described = built.describe() as { routes: readonly { method: string; path: string }[]; procedures: string[] };
  const procedures = built.sealed.procedures;
  const mounted = (prefix: string) => described.routes.some((route) => route.path === prefix || route.path.startsWith(`${prefix}/`));
  const rest = mounted("/rest");
  const mcp = mounted("/mcp");
  const rows: RouteRow[] = [];
  for (const name of described.procedures) {
    const procedure = procedures.get(name);
    const meta = (procedure?.["~orpc"]?.meta ?? {}) as Record<string, unknown>;
    const surfaces = [`POST /rpc/${name.replaceAll(".", "/")}`];
    if (rest && !name.startsWith("_admin.") && !name.endsWith(".live")) surfaces.push("REST");
    if (mcp && meta.mcp) surfaces.push("MCP");
    rows.push(["procedure", name, procedure ? declaredPermission(procedure) : "public", surfaces.join(", ")]);
  }
  for (const route of described.routes) {
    if (route.path === "/rpc/**") continue;
    rows.push(["route", `${route.method} ${route.path}`, "", ""]);
  }
  return rows;
}

/**
 * The app is built, never started: its embedded database is not opened, so this works beside a
 * running server too.
 */
export function routes(): Promise<number> {
  return onApp("routes", {}, routesOn, { database: false });
}

export async function routesOn({ built }: CommandTarget): Promise<number> {
  say(table([["kind", "name", "permission", "surfaces"], ...routeTable(built)]));
  return 0;
}
