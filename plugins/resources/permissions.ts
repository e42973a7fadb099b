import { RpcError, assertRole, type AppRpcContext } from "../../kernel/index.js";
import type { ListFilter, ResourcePermission } from "./options.js";
import { isWhereRule, withUser } from "./user-where.js";

/** Resource `admin` means the role `admin` itself, parsed from the comma-separated `user.role`. */
const ADMIN_ROLES = ["admin"];

/**
 * The part of a permission that needs no input or row, run before input validation so the
 * precedence holds: 401 signed out, then 403 missing role, then 400 bad input. Before the row is
 * known, `owner` only needs a signed-in caller.
 */
export function assertGate(permission: ResourcePermission<any, any>, context: AppRpcContext): void {
  // `owner` and `where` rules need a caller to compare rows with; the rows are checked in SQL.
  assertRole(permission === "owner" || isWhereRule(permission) ? "authenticated" : (permission as Exclude<typeof permission, object>), ADMIN_ROLES, context);
}

/** A function permission's verdict: 403 when it says no, the `where` the row must also match when it returns one. */
export async function assertFunction(
  permission: ResourcePermission<any, any>,
  args: { context: AppRpcContext; row?: Record<string, unknown> },
): Promise<ListFilter | undefined> {
  if (typeof permission !== "function") return undefined;
  const verdict = await permission(args);
  if (!verdict) throw new RpcError("FORBIDDEN", { message: "Permission denied" });
  return typeof verdict === "object" ? verdict : undefined;
}

/**
 * A list rule's verdict: 403 when a function says no, else the `where` it returned (the rows the
 * caller may see), or undefined for every row.
 */
export async function listFilter(permission: ResourcePermission<any, any>, context: AppRpcContext): Promise<ListFilter | undefined> {
  if (isWhereRule(permission)) return withUser(permission, context.user!.id) as ListFilter;
  if (typeof permission !== "function") return undefined;
  const verdict = await permission({ context });
  if (!verdict) throw new RpcError("FORBIDDEN", { message: "Permission denied" });
  return typeof verdict === "object" ? verdict : undefined;
}
