import type { AppRpcContext } from "../../kernel/index.js";

/**
 * What a job carries from the request that sent it: the sender's active organization (confirmed by
 * the organizations plugin) and the member who sent it. The handler's context runs in that
 * organization (`context.organizations`, tenant-scoped resources). A job sent with none carries none.
 */
export interface Carried {
  organizationId: string;
  userId: string;
}

/** The organizations plugin's service, as far as jobs use it. */
export interface JobTenancy {
  membership(context: AppRpcContext): Promise<{ organizationId: string; userId: string } | null>;
  actAs(context: AppRpcContext, acting: Carried): void;
}

/**
 * pg-boss keeps one `data` column, so a carrying job's data is stored wrapped under this key. Data
 * sent without an organization that happens to hold the key is wrapped too (carrying nothing), so a
 * caller can never forge what a job carries through the data they pass.
 */
const KEY = "$trellis";

export function wrap(data: unknown, carried: Carried | null): unknown {
  if (!carried && !isWrapped(data)) return data;
  return { [KEY]: carried && { organizationId: carried.organizationId, userId: carried.userId }, data };
}

export function unwrap(stored: unknown): { data: unknown; carried: Carried | null } {
  if (!isWrapped(stored)) return { data: stored, carried: null };
  const envelope = stored as Record<string, unknown>;
  const carried = envelope[KEY] as Partial<Carried> | null;
  const valid = carried && typeof carried.organizationId === "string" && typeof carried.userId === "string";
  return { data: envelope.data ?? null, carried: valid ? (carried as Carried) : null };
}

function isWrapped(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, KEY);
}

/** The organization a job sent from `context` carries: the confirmed membership, or none. */
export async function carriedFrom(tenancy: JobTenancy | undefined, context: AppRpcContext): Promise<Carried | null> {
  const membership = await tenancy?.membership(context);
  return membership ? { organizationId: membership.organizationId, userId: membership.userId } : null;
}
