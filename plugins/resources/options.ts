import { TrellisError, type AppRpcContext } from "../../kernel/index.js";
import { checkHooks, type ResourceHooks } from "./hooks.js";
import type { SoftDeleteOptions } from "./soft-delete.js";
import {
  RESOURCE_LIVE_INVALID,
  RESOURCE_OWNER_COLUMN_MISSING,
  RESOURCE_OWNER_ON_CREATE,
  RESOURCE_WRITABLE_AND_READONLY,
  RESOURCE_HOOKS_INVALID,
  RESOURCE_WHERE_ON_CREATE,
} from "./errors.js";

export type ResourceAction = "list" | "get" | "create" | "update" | "delete";
export const ACTIONS: readonly ResourceAction[] = ["list", "get", "create", "update", "delete"];

/**
 * A function permission: `row` is given on get, update and delete (undefined when the row is
 * missing). `false` refuses (403). It may instead return a `where` object: on list (and live) the
 * caller then sees only the rows that match it (`{ status: "published" }` hides drafts); on get,
 * update and delete the row must match it too (404 otherwise), in the same statement.
 */
export type ResourcePermissionFn<Ctx = AppRpcContext, Row = Record<string, unknown>> = (args: {
  context: Ctx;
  row?: Row;
}) => boolean | ListFilter | Promise<boolean | ListFilter>;

/** What a list rule may return instead of `true`: a `where` (same shape as the list's own) ANDed into every list. */
export type ListFilter = Record<string, unknown>;

/**
 * A rule written as a `where` (relation filters included): the caller must be signed in (401), and
 * only rows matching it exist for them on list, get, update and delete (404 otherwise). The string
 * `"$user.id"` anywhere in it is the caller's id: `{ assignees: { some: { userId: "$user.id" } } }`.
 */
export type WhereRule = { readonly [key: string]: unknown };

/**
 * `W` is the table's `where` type on an `App` (relation filters included), so a `where` rule is
 * checked against the schema. A function's answer is checked when it declares its return type
 * (`(): WhereOf<typeof v1, "task"> => ...`), and at the call (400 for an unknown column).
 */
export type ResourcePermission<Ctx = AppRpcContext, Row = Record<string, unknown>, W = WhereRule> =
  | "public"
  | "authenticated"
  | "admin"
  | "owner"
  | W
  | ResourcePermissionFn<Ctx, Row>;

export type ResourcePermissions<Ctx = AppRpcContext, Row = Record<string, unknown>, W = WhereRule> = Partial<
  Record<ResourceAction, ResourcePermission<Ctx, Row, W>>
>;

export interface ResourceOptions<Ctx = AppRpcContext, Row = Record<string, unknown>, W = WhereRule> {
  /**
   * Rule per action: a role name, `"owner"`, a `where` rule, or a function.
   * @default every action "public"
   */
  permissions?: ResourcePermissions<Ctx, Row, W>;
  /** Column holding the creator's user id; filled from the session on create, never from the client. */
  ownerColumn?: string;
  /**
   * Column holding the organization a row belongs to (a reference to `organization.id`; needs
   * `.auth({ organizations: true })` on the schema). Every read, write, include, search and stream
   * sees only the rows of the caller's active organization; create fills it from the session and a
   * client-sent value is a 400; another organization's row answers as a missing one (404). Every
   * action then needs a signed-in caller with an active organization (401, then 403 naming
   * `organization/set-active`). Composes with `ownerColumn`: "owner" rules then mean my rows in my
   * organization. See docs/organizations.md.
   * @default undefined (not tenant-scoped)
   */
  tenant?: string;
  /**
   * Rows per list call.
   * @default { default: 50, max: 100, maxSkip: 10000 }
   */
  listLimit?: { default?: number; max?: number; maxSkip?: number };
  /**
   * Items per `{name}.batch` call, creates, updates and deletes together (400 above).
   * @default 100
   */
  batchLimit?: number;
  /**
   * Relations callers may `include` on list and get. A name alone includes every related row,
   * whatever the related resource's rules (and `.build()` warns when that bypasses one); `{ relation,
   * scoped: true }` includes only the rows the related resource's `list` rule lets the caller see.
   * @default []
   */
  includable?: Array<string | IncludableRelation>;
  /**
   * Columns settable on create and update; every other column is server-controlled and dropped.
   * @default all columns
   */
  writable?: string[];
  /**
   * Columns stripped from create and update input.
   * @default []
   */
  readonly?: string[];
  /**
   * Registers `{name}.live`: the list as a stream of snapshots, gated by the list permission and
   * owner-scoped like it. The permission is re-checked every `revalidateMs` (`false`: never), at
   * most `max` streams are open at once (429 beyond), and the last third of them (`floor(max / 3)`)
   * only go to callers (the signed-in user, else the client address) holding fewer than
   * `maxPerCaller`: a caller is never refused while most slots are free, and no caller takes them all.
   * Needs a live provider on `db`.
   * @default false ({ revalidateMs: 30000, max: 100, maxPerCaller: 10 } when true; `maxPerCaller`
   *   is at most half of `max`, rounded up)
   */
  live?: boolean | { revalidateMs?: number | false; max?: number; maxPerCaller?: number };
  /**
   * Tags the procedures as MCP tools (`post_list`, `post_get`, `post_page`, `post_batch`, ...; `.mcp()`
   * serves them), each under the same permission as on `/rpc`. `true` for every one, or those to expose.
   * @default false
   */
  mcp?: boolean | Array<ResourceAction | "page" | "batch">;
  /**
   * Lifecycle hooks: `beforeCreate`, `afterCreate`, `beforeUpdate`, `afterUpdate`, `beforeDelete`,
   * `afterDelete` (docs/resources.md, "Hooks"). `before*` run in the write's transaction and may
   * change the data or refuse with an `RpcError`; `after*` run once it committed.
   * @default {} (no hooks)
   */
  hooks?: ResourceHooks<Ctx, Row>;
  /**
   * Deleting stamps the row's `deletedAt` (a nullable timestamp column the table must have) instead
   * of removing it: list, page, get, update, delete, live and search no longer see it,
   * `{name}.restore` (under the delete permission) brings it back, and an hourly purge (a cron job
   * with `.jobs()`) removes it for good after `purgeAfter`.
   * @default false ({ purgeAfter: "30d" } when true)
   */
  softDelete?: boolean | SoftDeleteOptions;
  /**
   * Registers `{name}.history({ where, cursor?, take? })`: the audit log's entries of one row,
   * newest first in cursor pages, to whoever may `get` that row (the get permission, owner, `where`
   * and tenant rules; a caller who may not read the row gets what `get` answers). Needs `.audit()`
   * recording the table (`RESOURCE_HISTORY_NOT_AUDITED` at build otherwise). See docs/audit.md.
   * @default false
   */
  history?: boolean;
}

export interface LiveLimits {
  revalidateMs: number | false;
  max: number;
  maxPerCaller: number;
}

/** The live settings of a resource, or undefined when it does not stream. */
export function liveLimits(options: ResourceOptions<any, any>): LiveLimits | undefined {
  if (!options.live) return undefined;
  const given = options.live === true ? {} : options.live;
  const max = given.max ?? 100;
  // Past two thirds of `max`, a caller holding ten streams (tabs, components), or half of `max`, gets no more.
  return { revalidateMs: given.revalidateMs ?? 30_000, max, maxPerCaller: given.maxPerCaller ?? Math.min(10, Math.ceil(max / 2)) };
}

/** One includable relation, with the rule its rows follow. */
export interface IncludableRelation {
  /** A relation of the resource's table. */
  relation: string;
  /**
   * `true`: the related resource's `list` permission and owner scoping apply to the included rows,
   * inside the same SQL statement (rows the caller may not list are left out). `false`: every related
   * row, as with a bare name, but stated on purpose, so `.build()` does not warn about it.
   * @default false
   */
  scoped?: boolean;
}

const TAG = { plugin: "resources", hook: "add" };

/** The rules that need no schema, checked at the `.resource()` call so the stack points at it. */
export function checkOptions(name: string, options: ResourceOptions<any, any>): void {
  const permissions = options.permissions ?? {};
  if (permissions.create === "owner") {
    throw new TrellisError(RESOURCE_OWNER_ON_CREATE, `Resource "${name}": "owner" is not valid for create (no row exists yet); use "authenticated"`, TAG);
  }
  if (typeof permissions.create === "object" && permissions.create !== null) {
    throw new TrellisError(RESOURCE_WHERE_ON_CREATE, `Resource "${name}": a where rule is not valid for create (no row exists yet); use "authenticated" or a function`, TAG);
  }
  const ownerActions = Object.entries(permissions).filter(([, value]) => value === "owner").map(([action]) => action);
  if (ownerActions.length > 0 && !options.ownerColumn) {
    throw new TrellisError(
      RESOURCE_OWNER_COLUMN_MISSING,
      `Resource "${name}": the "owner" permission on ${ownerActions.join(", ")} needs ownerColumn`,
      TAG,
    );
  }
  if (options.writable && options.readonly) {
    throw new TrellisError(RESOURCE_WRITABLE_AND_READONLY, `Resource "${name}": writable and readonly are mutually exclusive`, TAG);
  }
  if (typeof options.live === "object") checkLive(name, options.live);
  const hooks = checkHooks(options.hooks);
  if (hooks) throw new TrellisError(RESOURCE_HOOKS_INVALID, `Resource "${name}": ${hooks}`, TAG);
}

function checkLive(name: string, live: { revalidateMs?: number | false; max?: number; maxPerCaller?: number }): void {
  const count = (value: number | undefined) => value === undefined || (Number.isInteger(value) && value >= 1);
  const problems: string[] = [];
  if (!count(live.max)) problems.push(`max must be a whole number above 0, got ${live.max}`);
  if (!count(live.maxPerCaller)) problems.push(`maxPerCaller must be a whole number above 0, got ${live.maxPerCaller}`);
  if (live.revalidateMs !== undefined && live.revalidateMs !== false && !count(live.revalidateMs)) {
    problems.push(`revalidateMs must be false or a whole number of milliseconds above 0, got ${live.revalidateMs}`);
  }
  if (problems.length > 0) throw new TrellisError(RESOURCE_LIVE_INVALID, `Resource "${name}": live ${problems.join("; ")}`, TAG);
}

export interface ListLimits {
  default: number;
  max: number;
  maxSkip: number;
}

export function listLimits(options: ResourceOptions<any, any>): ListLimits {
  return {
    default: options.listLimit?.default ?? 50,
    max: options.listLimit?.max ?? 100,
    maxSkip: options.listLimit?.maxSkip ?? 10_000,
  };
}
