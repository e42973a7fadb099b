import { RpcError, whereRelations, type AppRpcContext, type SchemaModel } from "../../kernel/index.js";
import type { ResourcePermission } from "./options.js";
import { listScope, type RelatedRules } from "./include-rules.js";
import { isWhereRule, withUser } from "./user-where.js";

/**
 * Rules written as `where` objects, and the rules relation filters run under.
 *
 * - A permission may be a `where` (`{ assignees: { some: { userId: "$user.id" } } }`): it needs a
 *   signed-in caller (401 otherwise), the string `"$user.id"` anywhere in it stands for the
 *   caller's id, and it is ANDed into the statement of list, get, update and delete, so a row
 *   outside it is invisible (404 on get, update and delete; no check-then-write gap).
 * - A relation filter in a caller's `where` reads only the related rows its caller could list: the
 *   related resource's `list` rule is ANDed inside the subquery. A table without a resource is
 *   reachable only through a relation its source resource makes `includable` (whose include would
 *   show those rows anyway); any other is 400.
 */

type Where = Record<string, unknown>;

/**
 * The `where` a rule puts on the rows of list, get, update or delete for this caller, or undefined
 * for every row: the owner condition, a `where` rule with the caller's id, or what a function
 * returned (`false` is 403; on get, update and delete a function is asked later, with the row).
 */
export async function ruleWhere(permission: ResourcePermission<any, any>, ownerColumn: string | undefined, context: AppRpcContext, withRow: boolean): Promise<Where | undefined> {
  if (permission === "owner") return { [ownerColumn!]: context.user!.id };
  if (isWhereRule(permission)) return withUser(permission, context.user!.id) as Where;
  if (typeof permission !== "function" || withRow) return undefined;
  const verdict = await permission({ context });
  if (!verdict) throw new RpcError("FORBIDDEN", { message: "Permission denied" });
  return typeof verdict === "object" ? verdict : undefined;
}

/** What relation filters may reach from each resource's table, resolved once at build. */
export interface RelationRules {
  schema: SchemaModel;
  /** Every resource's list rule, by table. */
  resources: ReadonlyMap<string, RelatedRules>;
  /** Each resource's includable relations, by table. */
  includable: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The `related` scope of a caller's `where` on `table`: each table its relation filters reach, with
 * the condition the caller's own list of it would apply (`true`: every row). 400 for a relation
 * into a table without a resource that the source resource does not make includable.
 */
export async function relationScopes(rules: RelationRules, table: string, where: unknown, context: AppRpcContext): Promise<Record<string, Where | true>> {
  const out: Record<string, Where | true> = {};
  for (const found of whereRelations(rules.schema, table, where)) {
    const related = rules.resources.get(found.target);
    if (!related && !rules.includable.get(found.table)?.has(found.relation)) {
      throw new RpcError("BAD_REQUEST", {
        message: `${found.path}: "${found.relation}" cannot be filtered on: table "${found.target}" has no resource and "${found.table}" does not make the relation includable`,
      });
    }
    if (!Object.hasOwn(out, found.target)) out[found.target] = (related && (await listScope(related, context))) ?? true;
  }
  return out;
}
