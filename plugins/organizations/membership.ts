import { RpcError, type AppDatabase } from "../../kernel/index.js";
import type { Membership, Tenancy } from "./options.js";
import { NO_ACTIVE_ORGANIZATION } from "./errors.js";

type Caller = Parameters<Tenancy["membership"]>[0];
type Acting = Parameters<Tenancy["actAs"]>[1];

/**
 * A context made without a request (a job's) that acts for a member in an organization. A symbol
 * property, so copies of the context (`{ ...context, db: trx }`) keep it.
 */
const ACTING = Symbol("trellis.organizations.acting");

/** How long a membership read is kept between requests, for writes made by another process. */
export const MEMBERSHIP_TTL_MS = 5_000;
const MAX_KEPT = 10_000;

/**
 * The caller's membership of the session's active organization. better-auth keeps
 * `activeOrganizationId` on a session after its user is removed from that organization (only the
 * remover's own session is cleared), so the session alone proves nothing: the `member` row decides.
 *
 * Read once per request at most (memoised on the session object the request resolved), and kept
 * per user and organization for `ttlMs` between requests. Every write to `member` or
 * `organization` made through this app's database (the library's own, a cascade, raw SQL) drops
 * the kept answers at once, so a removal, a role change or a deleted organization applies from the
 * next request; writes made by another process apply within `ttlMs`.
 */
export function membershipLookup(db: AppDatabase<any>, ttlMs = MEMBERSHIP_TTL_MS) {
  const memo = new WeakMap<object, Promise<Membership | null>>();
  const kept = new Map<string, { until: number; found: Promise<Membership | null> }>();
  const read = async (organizationId: string, userId: string): Promise<Membership | null> => {
    const row = (await db
      .selectFrom("member" as never)
      .select(["id", "role"] as never)
      .where("organizationId" as never, "=", organizationId as never)
      .where("userId" as never, "=", userId as never)
      .executeTakeFirst()) as { id: string; role: string | null } | undefined;
    if (!row) return null;
    const roles = String(row.role ?? "").split(",").map((role) => role.trim()).filter(Boolean);
    return { organizationId, userId, memberId: row.id, roles };
  };
  const cached = (organizationId: string, userId: string): Promise<Membership | null> => {
    const key = `${userId}\0${organizationId}`;
    const now = Date.now();
    const hit = kept.get(key);
    if (hit && hit.until > now) return hit.found;
    // Bounded: past the cap, everything kept is dropped (it is only a saving, never the truth).
    if (kept.size >= MAX_KEPT) kept.clear();
    const found = read(organizationId, userId);
    kept.set(key, { until: now + ttlMs, found });
    // A failed read is not kept.
    found.catch(() => kept.get(key)?.found === found && kept.delete(key));
    return found;
  };
  const membership = (caller: Caller): Promise<Membership | null> => {
    const acting = (caller as { [ACTING]?: Acting })[ACTING];
    if (acting) {
      let found = memo.get(acting);
      if (!found) memo.set(acting, (found = cached(acting.organizationId, acting.userId)));
      return found;
    }
    const { session, user } = caller;
    const active = session?.activeOrganizationId;
    if (!session || !user || typeof active !== "string" || active === "") return Promise.resolve(null);
    let found = memo.get(session);
    if (!found) memo.set(session, (found = cached(active, user.id)));
    return found;
  };
  const require = async (caller: Caller): Promise<Membership> => {
    const acting = (caller as { [ACTING]?: Acting })[ACTING];
    if (!caller.user && !acting) throw new RpcError("UNAUTHORIZED", { message: "Sign in to call this procedure" });
    const found = await membership(caller);
    if (found) return found;
    if (acting) {
      throw new RpcError(NO_ACTIVE_ORGANIZATION, {
        status: 403,
        message: `The member this work acts for is no longer in organization ${acting.organizationId} (or it was deleted)`,
      });
    }
    const active = caller.session?.activeOrganizationId;
    throw new RpcError(NO_ACTIVE_ORGANIZATION, {
      status: 403,
      message:
        typeof active === "string" && active
          ? "You are no longer a member of the active organization: choose another with POST /api/auth/organization/set-active"
          : "No active organization: choose one with POST /api/auth/organization/set-active ({ organizationId })",
    });
  };
  /** Makes `context` act for a member in an organization: `membership` and `require` answer from that member's row. */
  const actAs = (context: Caller, acting: Acting): void => {
    Object.defineProperty(context, ACTING, { value: { organizationId: acting.organizationId, userId: acting.userId }, enumerable: true });
  };
  /** Drops every kept answer: a membership or an organization changed. */
  const forget = () => kept.clear();
  return { membership, require, actAs, forget };
}
