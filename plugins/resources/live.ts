import { RequestEvent, RpcError, callerBucket, eventOf, liveIterable, type AppRpcContext, type ProcedureBase, type SealedApp } from "../../kernel/index.js";
import { listInput } from "./inputs.js";
import { liveSlots } from "./live-slots.js";
import { assertGate, listFilter } from "./permissions.js";
import type { ListInput, ResourceSpec } from "./procedures.js";
import { tenantWhere } from "./tenant.js";

// The list's own input schema, field for field (so the same arguments get the same 400 before the
// stream starts), without `skip`: a live list is the first page.
const liveInput = listInput().unwrap().omit({ skip: true }).optional();

interface ListHelpers {
  listArgs(input: ListInput, context: AppRpcContext): Promise<Record<string, unknown>>;
  query(): { live(args: unknown, options: { signal?: AbortSignal }): AsyncIterableIterator<unknown> };
  sealed(): SealedApp;
}

/**
 * `{name}.live`: the list as a stream of snapshots. Everything that can refuse the caller happens
 * before the stream starts, so 401, 403, 400 and 429 are real HTTP statuses: the list gate (in the
 * builder's middleware), the arguments and function permission (`listArgs`), and the slot, taken
 * synchronously so `max` and `maxPerCaller` hold exactly under concurrent subscribes.
 */
export function liveProcedure(spec: ResourceSpec, base: ProcedureBase<AppRpcContext>, helpers: ListHelpers) {
  const limits = spec.live!;
  const slots = liveSlots(spec.name, limits.max, limits.maxPerCaller);
  const permission = spec.permissions.list;
  return base.input(liveInput).handler(async ({ input = {}, context, signal }) => {
    const release = slots.take(callerOf(context));
    try {
      const args = await helpers.listArgs(input as ListInput, context);
      // The list rule's `where` for this caller: when a revalidation computes another, the session changed.
      const scope = scopeKey(await listFilter(permission, context));
      const organization = scopeKey(await tenantWhere(spec.tenant, context));
      const source = helpers.query().live(args, { signal });
      const userId = context.user?.id;
      return liveIterable(source, {
        signal,
        revalidateMs: limits.revalidateMs,
        onRelease: release,
        // A fresh session lookup with the stream's own credentials: a sign-out, a ban or a lost
        // role ends the stream within the interval; an owner-scoped stream stays its owner's.
        revalidate: async () => {
          const fresh = await helpers.sealed().createContext(new RequestEvent(new Request("http://trellis.internal/", { headers: context.headers })));
          assertGate(permission, fresh);
          const freshScope = scopeKey(await listFilter(permission, fresh));
          if ((permission === "owner" && fresh.user?.id !== userId) || freshScope !== scope) throw new RpcError("UNAUTHORIZED", { message: "The session changed; subscribe again" });
          // A tenant stream ends when its organization is no longer the caller's active one, or they left it (403).
          if (spec.tenant && scopeKey(await tenantWhere(spec.tenant, fresh)) !== organization) {
            throw new RpcError("NO_ACTIVE_ORGANIZATION", { status: 403, message: "The active organization changed; subscribe again" });
          }
        },
      });
    } catch (error) {
      release();
      throw error;
    }
  });
}

/** Who holds a stream: the signed-in user, else the client address (the rate limit's rule). */
function callerOf(context: AppRpcContext): string {
  if (context.user) return `user:${context.user.id}`;
  const event = eventOf(context);
  return `ip:${(event && callerBucket(event)) ?? "unknown"}`;
}

/** A list rule's `where` as comparable text; a bigint value (a bigint column's) as its digits. */
function scopeKey(where: unknown): string {
  return JSON.stringify(where ?? null, (_, value) => (typeof value === "bigint" ? value.toString() : value));
}
