import type { TableModel } from "./schema/model.js";
import type { AppRpcContext } from "./context.js";
import type { AppDatabase } from "./db/database.js";

/**
 * The published registry of resources, provided by the resources plugin as the service
 * `"resource-registry"`. Files (attach permissions), admin (meta), REST and live read it instead of
 * reaching into the resources plugin.
 */
export type ResourceAction = "list" | "get" | "create" | "update" | "delete";

export interface ResourceInfo {
  /** The resource name, which is also its table name. */
  readonly name: string;
  readonly table: TableModel;
  readonly primaryKey: string;
  readonly ownerColumn: string | undefined;
  /** The column holding the row's organization (`tenant` option); absent when not tenant-scoped. */
  readonly tenant?: string;
  /** The rule per action: `"public"`, `"authenticated"`, `"admin"`, `"owner"`, `"where"` for a where rule or `"function"` for a permission function. */
  readonly permissions: Readonly<Record<ResourceAction, "public" | "authenticated" | "admin" | "owner" | "where" | "function">>;
  readonly includable: readonly string[];
  /** Procedure names per action (`post.list`, ...), plus `live` when the resource streams. */
  readonly procedures: Readonly<Partial<Record<ResourceAction | "live", string>>>;
  /**
   * Checks the action's permission for the caller on the row with this key (no key for list and
   * create) and throws exactly what the procedure would: 401 signed out, 403 role or function
   * refused, 404 when the row is missing or owned by someone else.
   */
  authorize(action: ResourceAction, context: AppRpcContext, key?: unknown): Promise<void>;
  /** The resource's lifecycle hooks, for write paths outside its procedures (`_admin.data`); absent when it declares none. */
  readonly hooks?: ResourceWriteHooks;
}

type Row = Record<string, unknown>;

/**
 * A resource's hooks as another write path runs them, the caller flagged as an admin write. `before*`
 * run in the caller's transaction (`trx`) and return the data to write; `after` gives the work to
 * run once the write commits (undefined when the hook is not declared).
 */
export interface ResourceWriteHooks {
  has(hook: "beforeCreate" | "afterCreate" | "beforeUpdate" | "afterUpdate" | "beforeDelete" | "afterDelete"): boolean;
  beforeCreate(trx: AppDatabase<any>, context: AppRpcContext, data: Row): Promise<Row>;
  beforeUpdate(trx: AppDatabase<any>, context: AppRpcContext, before: Row, data: Row): Promise<Row>;
  beforeDelete(trx: AppDatabase<any>, context: AppRpcContext, row: Row): Promise<void>;
  after(hook: "afterCreate" | "afterUpdate" | "afterDelete", context: AppRpcContext, args: Row): (() => Promise<void>) | undefined;
}

export type ResourceRegistry = ReadonlyMap<string, ResourceInfo>;

declare module "./services.js" {
  interface AppServices {
    "resource-registry": ResourceRegistry;
    /**
     * The tables whose change listeners read `before` on updates (webhooks with `payload: "rows"`),
     * provided by such a plugin: resources on them read each row before updating it.
     */
    "change-before": ReadonlySet<string>;
  }
}
