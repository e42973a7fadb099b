import { TrellisError, definePlugin, permissionMiddleware, type PluginContext, type ProcedureBase, type AppRpcContext, type AppPlugin, type SealedApp } from "../../kernel/index.js";
import { adminSettings, type AdminConfig, type AdminSettings } from "./options.js";
import { secondFactorMiddleware } from "./second-factor.js";
import { adminProcedures } from "./procedures.js";
import { adminTables } from "./tables.js";
import { firstAdmin } from "./first-admin.js";
import { dashboardRoutes } from "./dashboard.js";
import { ADMIN_BAD_PATH, ADMIN_TWO_FACTOR_MISSING } from "./errors.js";
import { countCache } from "./count-cache.js";
import type { AuthApi } from "./user-actions.js";
import type { FactorNoticesLike } from "./user-factors.js";
import { ActivityRing, activityRecorder } from "./activity.js";
import { SECTION_PLUGINS, adminSections } from "./sections.js";
import { exportRoute } from "./export.js";

export type { AdminConfig } from "./options.js";
export type { AdminRouter } from "./procedures.js";
export type { AdminMeta, AdminTableInfo, AdminColumn } from "./meta.js";
export type { AdminUser, AdminUserDetail } from "./users.js";
export type { AdminSsoProvider } from "./sso-providers.js";
export type { AdminHealth } from "./health.js";
export type { ActivityEntry } from "./activity.js";
export { REDACTED } from "./secrets.js";
export type { AdminSection } from "./sections.js";
export type { AdminProcedure } from "./procedure-list.js";

/**
 * The admin API under `_admin` (the facade reserves the namespace for this plugin) and, unless
 * `ui: false`, the dashboard at `path`. Stage `feature`: after auth, whose session every call
 * needs, and after resources, whose registry `meta` reports; before user plugins, which see
 * `_admin.*` in `ctx.procedures` (SPEC.md rule 7).
 */
export function adminPlugin(config: AdminConfig = {}): AppPlugin {
  const settings = adminSettings(config);
  return definePlugin({
    name: "admin",
    stage: "feature",
    // Plugins with an admin section build first, so their section is there to mount.
    optionalDependencies: ["auth", "resources", ...SECTION_PLUGINS],
    validate(ctx) {
      ctx.requireSession(".admin() (every _admin procedure needs a signed-in admin)");
      if (settings.requireTwoFactor && !ctx.schema.auth?.twoFactor) {
        throw new TrellisError(ADMIN_TWO_FACTOR_MISSING, ".admin({ requireTwoFactor: true }) needs the two-factor tables: schema(...).auth({ twoFactor: true })", { plugin: "admin", hook: "validate" });
      }
      if (settings.ui && (settings.path === "/rpc" || settings.path.startsWith("/rpc/") || settings.path.startsWith("/api/auth"))) {
        throw new TrellisError(ADMIN_BAD_PATH, `.admin({ path: "${settings.path}" }) collides with a built-in route; pick another path`, { plugin: "admin", hook: "validate" });
      }
    },
    build(ctx) {
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      if (settings.firstAdminEmail) firstAdmin(ctx, settings.firstAdminEmail, settings.roles);
      const counts = countCache();
      const activity = settings.activity > 0 ? new ActivityRing(settings.activity) : undefined;
      const recorder = activity && activityRecorder(activity, "/rpc/_admin/activity");
      if (recorder) ctx.hooks.error.tap(recorder.onError);
      ctx.hooks.changed.tap((change) => counts.changed(change.table));
      const tables = adminTables(ctx.schema);
      const sections = adminSections(ctx, gatedBase(ctx, settings), settings);
      const procedures = adminProcedures(ctx.base, {
        db: ctx.resources.db,
        kind: ctx.resources.kind,
        tables,
        settings,
        sealed: () => sealed!,
        registry: () => ctx.want("resource-registry"),
        plugins: ctx.plugins,
        counts,
        schema: ctx.schema,
        activity,
        services: () => ({ kv: ctx.resources.kv, storage: ctx.resources.storage }),
        auth: () => ctx.want("auth") as AuthApi | undefined,
        // Mail builds first (a section plugin); absent, or with the notice off, nothing is told.
        notices: () => ctx.want("factor-notices") as FactorNoticesLike | undefined,
        sections: Object.keys(sections.procedures),
      });
      return {
        procedures: { _admin: { ...sections.procedures, ...procedures } } as never,
        // The export is part of the API: served with `ui: false` too.
        routes: [exportRoute(settings.path, { db: ctx.resources.db, tables, settings, sealed: () => sealed! }), ...(settings.ui ? dashboardRoutes(settings.path, (ctx.want("auth-options") as { pages?: { signIn: string } } | undefined)?.pages?.signIn) : []), ...sections.routes],
        middleware: recorder ? [recorder.middleware] : [],
      };
    },
  });
}

function gatedBase(ctx: PluginContext, settings: AdminSettings) {
  return ctx.base.use(permissionMiddleware({ permission: "admin", roles: settings.roles })).use(secondFactorMiddleware(settings) as never) as unknown as ProcedureBase<AppRpcContext>;
}
