import type { AppRpcContext, PluginContext, ProcedureBase, ProcedureTree } from "../../kernel/index.js";

/**
 * The admin plugin's extension point for other plugins' admin procedures. `_admin` is reserved for
 * this plugin, so a plugin with admin procedures of its own provides them as the service
 * `admin-section:<plugin name>`: a function of the role-gated builder (401 signed out, 403 without
 * a role) returning procedures, served as `_admin.<plugin name>.*`. The contributing plugin must
 * build first, so it is listed among this plugin's optional dependencies (ordering only: absent
 * ones are no error).
 */
export type AdminSection = (gated: ProcedureBase<AppRpcContext>) => ProcedureTree;

/** Plugins whose admin sections are read, in this order. */
export const SECTION_PLUGINS = ["mail", "jobs", "backups"] as const;

export function adminSections(ctx: PluginContext, gated: ProcedureBase<AppRpcContext>): ProcedureTree {
  const tree: ProcedureTree = {};
  for (const name of SECTION_PLUGINS) {
    const section = ctx.want(`admin-section:${name}`) as AdminSection | undefined;
    if (typeof section === "function") tree[name] = section(gated);
  }
  return tree;
}
