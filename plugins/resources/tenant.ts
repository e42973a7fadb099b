import { RpcError, type AppRpcContext } from "../../kernel/index.js";

/**
 * Tenant-scoped resources (`tenant: "orgId"`): every row belongs to an organization, and a caller
 * sees, counts, includes, streams and writes only the rows of their active organization. The
 * condition is the query's trusted scope (ANDed into the statement, as the owner condition is), so
 * a row of another organization is exactly a missing row: 404 on get, update and delete, absent
 * from lists, pages, searches, includes and relation filters. The active organization comes from
 * the organizations plugin (its `organizations` service), which confirms the membership once per
 * request; signed out is 401, no active organization (or one the caller left) 403 naming
 * `organization/set-active`.
 */

type Where = Record<string, unknown>;

/** The part of the `organizations` service a tenant resource reads (that plugin owns the rest). */
export interface TenantSource {
  membership(context: AppRpcContext): Promise<{ organizationId: string } | null>;
  require(context: AppRpcContext): Promise<{ organizationId: string }>;
}

/** A resource's tenant column and where its organization comes from, resolved at build. */
export interface Tenant {
  column: string;
  source: () => TenantSource;
}

/** The caller's tenant condition, or the refusal (401 signed out, 403 without an active organization). */
export async function tenantWhere(tenant: Tenant | undefined, context: AppRpcContext): Promise<Where | undefined> {
  if (!tenant) return undefined;
  const { organizationId } = await tenant.source().require(context);
  return { [tenant.column]: organizationId };
}

/** The tenant condition for rows read through another resource (include, relation filter): none visible without an organization. */
export async function relatedTenantWhere(tenant: Tenant, context: AppRpcContext): Promise<Where> {
  const found = await tenant.source().membership(context);
  return found ? { [tenant.column]: found.organizationId } : { OR: [] };
}

/** `a` AND `b`, either possibly absent. */
export function both(a: Where | undefined, b: Where | undefined): Where | undefined {
  if (!a) return b;
  if (!b) return a;
  return { AND: [a, b] };
}

/**
 * A client-sent tenant column is refused (400) rather than silently dropped: a caller who believes
 * they can write into an organization learns at once that it comes from the session.
 */
export function refuseTenantInput(tenant: Tenant | undefined, action: string, input: unknown): void {
  if (!tenant || typeof input !== "object" || input === null) return;
  const sent = (data: unknown) => typeof data === "object" && data !== null && Object.hasOwn(data, tenant.column);
  const record = input as Record<string, unknown>;
  const offending =
    action === "create" ? sent(record)
    : action === "update" ? sent(record.data)
    : action === "batch" ? (Array.isArray(record.create) && record.create.some(sent)) || (Array.isArray(record.update) && record.update.some((item) => sent((item as Record<string, unknown> | null)?.data)))
    : false;
  if (offending) {
    throw new RpcError("BAD_REQUEST", { message: `${tenant.column} is set from the active organization: leave it out (switch organizations with POST /api/auth/organization/set-active)` });
  }
}
