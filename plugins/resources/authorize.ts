import { RpcError, decodeRow, encodeValue, rowSelection, type AppDatabase, type AppRpcContext, type DatabaseKind, type ResourceAction } from "../../kernel/index.js";
import { assertFunction, assertGate } from "./permissions.js";
import type { ResourceSpec } from "./procedures.js";

/**
 * A resource's permission for one action on one row, outside its procedures: what the published
 * registry's `authorize` runs for other plugins (files attaching to a row, say). The answers are the
 * procedures' own: 401 signed out, 403 role or function refused, 404 missing or not owned.
 */
export function authorizer(spec: ResourceSpec, db: AppDatabase<any>, kind: DatabaseKind) {
  const { table, primaryKey, ownerColumn, permissions } = spec;
  const columns = rowSelection(kind, table);
  return async (action: ResourceAction, context: AppRpcContext, key?: unknown): Promise<void> => {
    const permission = permissions[action];
    assertGate(permission, context);
    if (key === undefined) {
      await assertFunction(permission, { context });
      return;
    }
    const found = await db
      .selectFrom(table.name)
      .select(columns)
      .where(primaryKey, "=", encodeValue(kind, table.columns[primaryKey]!, key))
      .executeTakeFirst();
    const row = found ? decodeRow(kind, table, found as Record<string, unknown>) : undefined;
    const owned = permission !== "owner" || (row !== undefined && row[ownerColumn!] === context.user!.id);
    await assertFunction(permission, { context, row: owned ? row : undefined });
    if (!row || !owned) throw new RpcError("NOT_FOUND", { message: `No ${spec.name} matches` });
  };
}
