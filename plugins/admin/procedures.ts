import { secondFactorMiddleware } from "./second-factor.js";
import { permissionMiddleware, type AppDatabase, type AppRpcContext, type DatabaseKind, type ProcedureBase, type ResourceRegistry, type SealedApp, type SchemaModel, type AppKV, type AppStorage } from "../../kernel/index.js";
import { dataProcedures } from "./data.js";
import { describeApp, type AdminMeta } from "./meta.js";
import type { AdminSettings } from "./options.js";
import type { AdminTable } from "./tables.js";
import type { CountCache } from "./count-cache.js";
import { userProcedures } from "./users.js";
import { checkHealth, type AdminHealth } from "./health.js";
import { activityProcedure, type ActivityRing } from "./activity.js";
import type { AuthApi } from "./user-actions.js";
import { procedureList } from "./procedure-list.js";
import type { FactorNoticesLike } from "./user-factors.js";
import { ssoProviders } from "./sso-providers.js";

export interface AdminDeps {
  db: AppDatabase<any>;
  kind: DatabaseKind;
  tables: ReadonlyMap<string, AdminTable>;
  settings: AdminSettings;
  sealed: () => SealedApp;
  registry: () => ResourceRegistry | undefined;
  plugins: readonly string[];
  counts: CountCache;
  schema: SchemaModel;
  /** The last requests of this replica; undefined with `activity: false`. */
  activity: ActivityRing | undefined;
  /** The app's key/value store and file storage, read when asked. */
  services: () => { kv: AppKV | undefined; storage: AppStorage | undefined };
  /** The auth library instance (the `auth` service), once the app is ready. */
  auth: () => AuthApi | undefined;
  /** The mail plugin's `factor-notices` service, when the app mails factor changes. */
  notices: () => FactorNoticesLike | undefined;
  /** The other plugins' sections mounted under `_admin` (sections.ts). */
  sections: readonly string[];
}

/**
 * The `_admin` procedures. Every one passes the role check first (401 signed out, 403 without one
 * of `roles`), before its input is validated, so a caller without the role learns nothing from a 400.
 */
export function adminProcedures(base: ProcedureBase<AppRpcContext>, deps: AdminDeps) {
  const gated = base.use(permissionMiddleware({ permission: "admin", roles: deps.settings.roles })).use(secondFactorMiddleware(deps.settings) as never);
  return {
    meta: gated.handler(
      (): Promise<AdminMeta> => describeApp(deps.sealed(), deps.db, deps.kind, deps.tables, deps.registry(), deps.plugins, deps.settings.ui, deps.sections),
    ),
    /**
     * `drift`: "verified" when the applied definition's checksum is recorded (the app checks it
     * against the registered version at every start and refuses to start on a difference), else
     * "unrecorded" (applied before checksums were kept).
     */
    migrations: gated.handler(async (): Promise<{ name: string; version: string; executedAt: Date; checksum: string | null; drift: "verified" | "unrecorded" }[]> =>
      (await deps.sealed().migrations()).map(({ name, version, executedAt, checksum }) => ({ name, version, executedAt, checksum: checksum ?? null, drift: checksum ? "verified" : "unrecorded" })),
    ),
    activity: activityProcedure(gated, deps.activity),
    health: gated.handler((): Promise<AdminHealth> => checkHealth(deps.db, deps.services().kv, deps.services().storage)),
    procedures: procedureList(gated, deps.sealed),
    data: dataProcedures(gated, deps.db, deps.kind, deps.tables, deps.settings, deps.counts, deps.registry),
    users: userProcedures(gated, deps.db, deps.kind, deps.schema, deps.auth, deps.notices),
    sso: ssoProviders(gated, deps.db, deps.schema, deps.auth),
  };
}

/** The router `.admin()` adds: `client._admin.data.list(...)` and friends. */
export type AdminRouter = ReturnType<typeof adminProcedures>;
