import { RpcError, type AppDatabase } from "../../kernel/index.js";
import type { Membership, Tenancy } from "./options.js";
import { NO_ACTIVE_ORGANIZATION } from "./errors.js";

type Caller = Parameters<Tenancy["membership"]>[0];

/**
 * The caller's membership of the session's active organization. better-auth keeps
 * `activeOrganizationId` on a session after its user is removed from that organization (only the
 * remover's own session is cleared), so the session alone proves nothing: the `member` row is read
 * on every request that asks, memoised on the session object the request resolved (one query per
 * request, and a revalidating live stream's fresh lookup reads it afresh).
 */
export function membershipLookup(db: AppDatabase<any>) {
  const memo = new WeakMap<object, Promise<Membership | null>>();
  const read = async (organizationId: string, userId: string): Promise<Membership | null> => {
    const row = (await db
      .selectFrom("member" as never)
      .select(["id", "role"] as never)
      .where("organizationId" as never, "=", organizationId as never)
      .where("userId" as never, "=", userId as never)
      .executeTakeFirst()) as { id: string; role: string | null } | undefined;
    if (!row) return null;
    const roles = String(row.role ?? "").split(",").map((role) => role.trim()).filter(Boolean);
    return { organizationId, memberId: row.id, roles };
  };
  const membership = (caller: Caller): Promise<Membership | null> => {
    const { session, user } = caller;
    const active = session?.activeOrganizationId;
    if (!session || !user || typeof active !== "string" || active === "") return Promise.resolve(null);
    let found = memo.get(session);
    if (!found) memo.set(session, (found = read(active, user.id)));
    return found;
  };
  const require = async (caller: Caller): Promise<Membership> => {
    if (!caller.user) throw new RpcError("UNAUTHORIZED", { message: "Sign in to call this procedure" });
    const found = await membership(caller);
    if (found) return found;
    const active = caller.session?.activeOrganizationId;
    throw new RpcError(NO_ACTIVE_ORGANIZATION, {
      status: 403,
      message:
        typeof active === "string" && active
          ? "You are no longer a member of the active organization: choose another with POST /api/auth/organization/set-active"
          : "No active organization: choose one with POST /api/auth/organization/set-active ({ organizationId })",
    });
  };
  return { membership, require };
}
