import { AsyncLocalStorage } from "node:async_hooks";
import { z } from "zod";
import type { AppRpcContext, HttpMiddleware, ProcedureBase } from "../../kernel/index.js";

export interface ActivityEntry {
  /** Increasing per replica: a client asks for `after` the last one it has. */
  seq: number;
  at: Date;
  method: string;
  path: string;
  status: number;
  ms: number;
  /** The signed-in user, when the request looked one up. */
  userId: string | null;
  requestId: string;
  /** For an unexpected failure (5xx): the error's message, as `onError` gets it. */
  error: string | null;
}

/**
 * The last requests this replica served, in a bounded ring held in memory: nothing is stored, and
 * each replica has its own. Fed by the admin plugin's HTTP middleware (and the error hook for the
 * message of an unexpected failure), not by the logger, so it works with logging off.
 */
export class ActivityRing {
  readonly #entries: ActivityEntry[] = [];
  #seq = 0;
  constructor(readonly capacity: number) {}

  add(entry: Omit<ActivityEntry, "seq">): void {
    this.#entries.push({ ...entry, seq: ++this.#seq });
    if (this.#entries.length > this.capacity) this.#entries.shift();
  }

  /** Newest first. */
  list(filter: { after?: number; status?: number; path?: string; take: number }): ActivityEntry[] {
    const out: ActivityEntry[] = [];
    for (let i = this.#entries.length - 1; i >= 0 && out.length < filter.take; i--) {
      const entry = this.#entries[i]!;
      if (filter.after !== undefined && entry.seq <= filter.after) break;
      if (filter.status !== undefined && !matchesStatus(entry.status, filter.status)) continue;
      if (filter.path && !entry.path.includes(filter.path)) continue;
      out.push(entry);
    }
    return out;
  }
}

/** `4` matches 400-499, `404` matches 404. */
function matchesStatus(status: number, wanted: number): boolean {
  return wanted < 10 ? Math.floor(status / 100) === wanted : status === wanted;
}

type Pending = { error: string | null };

/** The middleware that records every request, and the error-hook tap that names unexpected failures. */
export function activityRecorder(ring: ActivityRing, ownPath: string) {
  const current = new AsyncLocalStorage<Pending>();
  const middleware: HttpMiddleware = async (event, next) => {
    // The dashboard's own polling would push everything else out of the ring.
    if (event.path === ownPath) return next();
    const started = performance.now();
    const pending: Pending = { error: null };
    let status = 500;
    try {
      const response = await current.run(pending, next);
      status = response.status;
      return response;
    } catch (error) {
      pending.error ??= messageOf(error);
      throw error;
    } finally {
      // Only a session already looked up is read: recording never costs a lookup.
      const user = event.sessionState !== undefined ? (await event.session().catch(() => undefined))?.user : undefined;
      ring.add({
        at: new Date(),
        method: event.method,
        path: event.path,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        userId: user?.id ?? null,
        requestId: event.requestId,
        error: status >= 500 ? pending.error : null,
      });
    }
  };
  middleware.displayName = "admin:activity";
  /** Never maps an error (returns undefined): it only notes the message for the request's entry. */
  const onError = (error: unknown) => {
    const pending = current.getStore();
    if (pending && pending.error === null) pending.error = messageOf(error);
    return undefined;
  };
  return { middleware, onError };
}

function messageOf(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0]!.slice(0, 300);
}

export function activityProcedure(gated: ProcedureBase<AppRpcContext>, ring: ActivityRing | undefined) {
  return gated
    .input(
      z
        .object({
          after: z.number().int().min(0).optional(),
          status: z.number().int().min(1).max(599).optional(),
          path: z.string().max(500).optional(),
          take: z.number().int().min(1).max(500).optional(),
        })
        .optional(),
    )
    .handler(({ input }): { capacity: number; entries: ActivityEntry[] } => ({
      capacity: ring?.capacity ?? 0,
      entries: ring ? ring.list({ ...input, take: input?.take ?? 100 }) : [],
    }));
}
