import type { TableModel } from "./schema/model.js";
import type { AppRpcContext } from "./context.js";

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
}

export type ResourceRegistry = ReadonlyMap<string, ResourceInfo>;

declare module "./services.js" {
  interface AppServices {
    "resource-registry": ResourceRegistry;
  }
}
