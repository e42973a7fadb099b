import { z } from "zod";
import { RequestEvent, RpcError, liveIterable, type AppRpcContext, type ProcedureBase, type SealedApp } from "../../kernel/index.js";
import { assertGate, listFilter } from "./permissions.js";
import type { ListInput, ResourceSpec } from "./procedures.js";

const orderBy = z.array(z.record(z.string(), z.enum(["asc", "desc"])));
const liveInput = z
  .object({
    where: z.record(z.string(), z.unknown()).optional(),
    orderBy: orderBy.optional(),
    take: z.number().int().min(0).optional(),
    include: z.record(z.string(), z.literal(true)).optional(),
  })
  .optional();

interface ListHelpers {
  listArgs(input: ListInput, context: AppRpcContext): Promise<Record<string, unknown>>;
  query(): { live(args: unknown, options: { signal?: AbortSignal }): AsyncIterableIterator<unknown> };
  sealed(): SealedApp;
}

/**
 * `{name}.live`: the list as a stream of snapshots. Everything that can refuse the caller happens
 * before the stream starts, so 401, 403, 400 and 429 are real HTTP statuses: the list gate (in the
 * builder's middleware), the arguments and function permission (`listArgs`), and the slot, taken
 * synchronously so `max` holds exactly under concurrent subscribes.
 */
export function liveProcedure(spec: ResourceSpec, base: ProcedureBase<AppRpcContext>, helpers: ListHelpers) {
  const limits = spec.live!;
  let open = 0;
  const permission = spec.permissions.list;
  return base.input(liveInput).handler(async ({ input = {}, context, signal }) => {
    if (open >= limits.max) throw new RpcError("TOO_MANY_REQUESTS", { message: `At most ${limits.max} live ${spec.name} streams may be open` });
    open++;
    let held = true;
    const release = () => {
      if (held) (held = false), open--;
    };
    try {
      const args = await helpers.listArgs(input as ListInput, context);
      // The list rule's `where` for this caller: when a revalidation computes another, the session changed.
      const scope = JSON.stringify((await listFilter(permission, context)) ?? null);
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
          const freshScope = JSON.stringify((await listFilter(permission, fresh)) ?? null);
          if ((permission === "owner" && fresh.user?.id !== userId) || freshScope !== scope) throw new RpcError("UNAUTHORIZED", { message: "The session changed; subscribe again" });
        },
      });
    } catch (error) {
      release();
      throw error;
    }
  });
}
