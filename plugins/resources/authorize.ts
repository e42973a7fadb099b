import { RpcError, type AppDatabase, type AppRpcContext, type ResourceAction } from "../../kernel/index.js";
import { assertFunction, assertGate } from "./permissions.js";
import type { ResourceSpec } from "./procedures.js";
import { ruleWhere } from "./where-rules.js";
import { both, tenantWhere } from "./tenant.js";

/**
 * A resource's permission for one action on one row, outside its procedures: what the published
 * registry's `authorize` runs for other plugins (files attaching to a row, say). The answers are the
 * procedures' own: 401 signed out, 403 role or function refused, 404 missing, not owned or outside
 * a `where` rule.
 */
export function authorizer(spec: ResourceSpec, db: AppDatabase<any>) {
  const { table, primaryKey, ownerColumn, permissions } = spec;
  const query = () => (db.query as Record<string, any>)[table.name];
  return async (action: ResourceAction, context: AppRpcContext, key?: unknown): Promise<void> => {
    const permission = permissions[action];
    assertGate(permission, context);
    await tenantWhere(spec.tenant, context);
    if (key === undefined) {
      await assertFunction(permission, { context });
      return;
    }
    // The owner condition or a where rule: a row outside it is not there for this caller.
    const find = async (rule: Record<string, unknown> | undefined) =>
      ((await query().findFirst({ where: { [primaryKey]: key }, ...(rule ? { scope: { where: rule } } : {}) })) ?? undefined) as Record<string, unknown> | undefined;
    let row = await find(both(await ruleWhere(permission, ownerColumn, context, true), await tenantWhere(spec.tenant, context)));
    const verdict = await assertFunction(permission, { context, row });
    if (verdict && row) row = await find(verdict);
    if (!row) throw new RpcError("NOT_FOUND", { message: `No ${spec.name} matches` });
  };
}
