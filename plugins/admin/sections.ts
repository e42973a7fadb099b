import { assertRole, type AppRpcContext, type PluginContext, type ProcedureBase, type ProcedureTree, type RouteDefinition } from "../../kernel/index.js";
import { assertSecondFactor, type SecondFactorRule } from "./second-factor.js";

/**
 * The admin plugin's extension point for other plugins' admin procedures. `_admin` is reserved for
 * this plugin, so a plugin with admin procedures of its own provides them as the service
 * `admin-section:<plugin name>`: a function of the role-gated builder (401 signed out, 403 without
 * a role) returning procedures, served as `_admin.<plugin name>.*`. The contributing plugin must
 * build first, so it is listed among this plugin's optional dependencies (ordering only: absent
 * ones are no error).
 *
 * A section may also carry `routes` (what a procedure cannot answer, such as a file's bytes for an
 * `<img>`): each is mounted under the dashboard's path (`/files/:id` becomes `/_admin/files/:id`)
 * behind the same role check, run before the route's own handler.
 */
export type AdminSection = ((gated: ProcedureBase<AppRpcContext>) => ProcedureTree) & { routes?: readonly RouteDefinition[] };

/** Plugins whose admin sections are read, in this order. */
export const SECTION_PLUGINS = ["mail", "jobs", "files", "backups", "audit", "channels", "organizations"] as const;

export function adminSections(ctx: PluginContext, gated: ProcedureBase<AppRpcContext>, mount: { path: string; roles: readonly string[] } & SecondFactorRule): { procedures: ProcedureTree; routes: RouteDefinition[] } {
  const procedures: ProcedureTree = {};
  const routes: RouteDefinition[] = [];
  for (const name of SECTION_PLUGINS) {
    const section = ctx.want(`admin-section:${name}`) as AdminSection | undefined;
    if (typeof section !== "function") continue;
    procedures[name] = section(gated);
    for (const route of section.routes ?? []) {
      routes.push({
        ...route,
        path: `${mount.path}${route.path}`,
        context: true,
        handler: (event, context) => {
          assertRole("admin", mount.roles, context as AppRpcContext);
          assertSecondFactor(mount, context as AppRpcContext);
          return route.handler(event, context);
        },
      });
    }
  }
  return { procedures, routes };
}
