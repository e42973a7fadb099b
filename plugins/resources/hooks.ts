import { eventOf, writeActor, type AppDatabase, type AppRpcContext, type ErrorSource, type SessionUser, type WriteActor } from "../../kernel/index.js";

/** What every hook receives: the caller, the request's context and (for `before*`) the write's transaction. */
export interface HookCaller<Ctx = AppRpcContext> {
  /** The request's context (the job's, for a write a job makes). */
  context: Ctx;
  /** The signed-in user, or null: `context.user`. */
  user: SessionUser | null;
  /** Who writes: a user, an API key's user, a job, or an anonymous caller; `admin` for `_admin.data` writes. */
  actor: WriteActor;
}

/** `before*` hooks run inside the write's transaction: reads and writes through `trx` commit or roll back with it. */
export interface BeforeHook<Ctx> extends HookCaller<Ctx> {
  trx: AppDatabase<any>;
}

/**
 * Lifecycle hooks of a resource. `before*` run inside the write's transaction, before its statement:
 * they may change the data (return the data to write, or change `data` in place), read or write
 * other tables through `trx`, or refuse by throwing an `RpcError` (its status and message reach the
 * caller on every surface; the write and the hook's own writes roll back). `after*` run once the
 * write has committed (after the caller's own transaction, when there is one; never for a rolled-back
 * write): a failure there is reported to `onError` and never changes the answer. They fire for every
 * write made through the resource (RPC, REST, MCP, the typed client, batch items, `_admin.data`),
 * not for raw writes through `context.db`.
 */
export interface ResourceHooks<Ctx = AppRpcContext, Row = Record<string, unknown>> {
  beforeCreate?(args: BeforeHook<Ctx> & { data: Partial<Row> }): HookData<Row>;
  afterCreate?(args: HookCaller<Ctx> & { row: Row }): unknown;
  /** `before` is the row as it is; `data` the columns the update sets. */
  beforeUpdate?(args: BeforeHook<Ctx> & { before: Row; data: Partial<Row> }): HookData<Row>;
  afterUpdate?(args: HookCaller<Ctx> & { before: Row; row: Row }): unknown;
  beforeDelete?(args: BeforeHook<Ctx> & { row: Row }): void | Promise<void>;
  afterDelete?(args: HookCaller<Ctx> & { row: Row }): unknown;
}

/** What a `before*` hook that may change the data returns: the data to write, or nothing to keep `data` (changed in place or not). */
export type HookData<Row> = void | Partial<Row> | Promise<void | Partial<Row>>;

export type HookName = keyof ResourceHooks;
const NAMES: readonly HookName[] = ["beforeCreate", "afterCreate", "beforeUpdate", "afterUpdate", "beforeDelete", "afterDelete"];

type Row = Record<string, unknown>;
type Report = (error: unknown, source: ErrorSource, event?: ReturnType<typeof eventOf>) => void;

/** Work an after hook left for the commit. */
export type AfterWork = () => Promise<void>;

/** The hooks of one resource, bound to the app's reporter: what the write paths call. */
export interface BoundHooks {
  readonly has: (name: HookName) => boolean;
  /** Whether a create, update or delete needs its own transaction (a `before*` hook runs in it). */
  readonly transacts: (action: "create" | "update" | "delete") => boolean;
  readonly caller: (context: AppRpcContext, admin: boolean) => HookCaller;
  readonly beforeCreate: (trx: AppDatabase<any>, caller: HookCaller, data: Row) => Promise<Row>;
  readonly beforeUpdate: (trx: AppDatabase<any>, caller: HookCaller, before: Row, data: Row) => Promise<Row>;
  readonly beforeDelete: (trx: AppDatabase<any>, caller: HookCaller, row: Row) => Promise<void>;
  /** The after hook's run, to be handed to `afterCommit`; undefined when there is no such hook. */
  readonly after: (name: "afterCreate" | "afterUpdate" | "afterDelete", caller: HookCaller, args: Row) => AfterWork | undefined;
}

export function checkHooks(hooks: unknown): string | undefined {
  if (hooks === undefined) return undefined;
  if (typeof hooks !== "object" || hooks === null) return "hooks must be an object of functions";
  const bad = Object.entries(hooks).filter(([name, fn]) => !NAMES.includes(name as HookName) || typeof fn !== "function").map(([name]) => name);
  return bad.length ? `hooks: unknown hook or not a function: ${bad.join(", ")} (hooks are ${NAMES.join(", ")})` : undefined;
}

export function bindHooks(resource: string, hooks: ResourceHooks<any, any> | undefined, report: Report): BoundHooks | undefined {
  if (!hooks || !NAMES.some((name) => hooks[name])) return undefined;
  const given = hooks as ResourceHooks<AppRpcContext, Row>;
  // The data a before hook returns replaces the data; undefined keeps the (possibly changed) object.
  const data = (returned: unknown, original: Row): Row => (returned && typeof returned === "object" ? (returned as Row) : original);
  return {
    has: (name) => typeof given[name] === "function",
    transacts: (action) => typeof given[action === "create" ? "beforeCreate" : action === "update" ? "beforeUpdate" : "beforeDelete"] === "function",
    caller: (context, admin) => ({ context, user: context.user, actor: writeActor(context, admin) }),
    beforeCreate: async (trx, caller, input) => (given.beforeCreate ? data(await given.beforeCreate({ ...caller, trx, data: input }), input) : input),
    beforeUpdate: async (trx, caller, before, input) => (given.beforeUpdate ? data(await given.beforeUpdate({ ...caller, trx, before, data: input }), input) : input),
    beforeDelete: async (trx, caller, row) => {
      await given.beforeDelete?.({ ...caller, trx, row });
    },
    after: (name, caller, args) => {
      const hook = given[name] as ((args: unknown) => unknown) | undefined;
      if (!hook) return undefined;
      return async () => {
        try {
          await hook({ ...caller, ...args });
        } catch (error) {
          // The write is committed: the failure is the app's to hear about, never the caller's 500.
          const event = eventOf(caller.context);
          report(new Error(`resource "${resource}": ${name} hook failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }), sourceOf(event), event);
        }
      };
    },
  };
}

/** The surface a write came in through, as `onError` names it. */
function sourceOf(event: ReturnType<typeof eventOf>): ErrorSource {
  const path = event?.path ?? "";
  if (event?.request.url.startsWith("http://trellis.internal/jobs/")) return "job";
  if (path.startsWith("/rest/") || path === "/rest") return "rest";
  if (path.startsWith("/rpc/")) return "rpc";
  return event?.procedure ? "mcp" : "rpc";
}

/** Runs after-commit work in order, once the write's transaction (and the caller's) has committed. */
export async function afterCommit(db: AppDatabase<any>, work: readonly AfterWork[]): Promise<void> {
  if (work.length === 0) return;
  await db.afterCommit(async () => {
    for (const run of work) await run();
  });
}
