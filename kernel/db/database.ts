import type { Kysely } from "kysely";
import type { SchemaModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { createQueryApi, type QueryApi } from "./query.js";
import type { LiveHub } from "./live.js";
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "./query-limits.js";

/**
 * `context.db`: the Kysely instance itself (so `db.selectFrom(...)` and every other builder method
 * work as documented by Kysely), with `query` (relational reads) and `transact(fn)` attached.
 */
export type AppDatabase<DB = any, Q = QueryApi<DB>> = Kysely<DB> & {
  /** Relational reads; typed from the schema (`QueryOf<typeof v1>`) on an `App`'s context. */
  readonly query: Q;
  /** Runs `fn` in a transaction; the handle it receives is an `AppDatabase` too, `query` included. */
  transact<T>(fn: (trx: AppDatabase<DB, Q>) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` once the transaction open here (a `transact` in this call chain) commits, and never
   * when it rolls back; a failure then is logged, the commit stands. With no transaction open, runs
   * `fn` at once and settles with it.
   */
  afterCommit(fn: () => unknown): Promise<void>;
};

/** Queues work for the commit of the transaction open in this async context; false when none is. */
export type QueueAfterCommit = (fn: () => unknown) => boolean;

/** The dialect layer's on-demand transaction (`ReentrantDialect.transactOnDemand`), bound to the app's Kysely instance. */
export type OnDemand = <T>(fn: (settle: () => boolean) => Promise<T>) => Promise<T>;
const ON_DEMAND = Symbol("trellis.transactOnDemand");

/**
 * Runs `fn` in a transaction that begins only when `fn` first reaches the database (through `db`, a
 * context's `db` or anything else in this call chain): work that may read or write, or may not, pays
 * BEGIN and COMMIT only when it does. `settle()` ends the on-demand part and says whether the
 * transaction began: later statements join it when it did, and otherwise run on their own. Without
 * the dialect layer (a bare Kysely instance), a plain `transact`.
 */
export function transactOnDemand<T>(db: AppDatabase<any>, fn: (settle: () => boolean) => Promise<T>): Promise<T> {
  const run = (db as unknown as Record<symbol, OnDemand | undefined>)[ON_DEMAND];
  return run ? run(fn) : db.transact(() => fn(() => true));
}

/** How the dialect layer runs a function in a transaction (its re-entrant wrapper, usually). */
export type Transact = <T>(fn: (trx: Kysely<any>) => Promise<T>) => Promise<T>;

/**
 * Attaches `query` and `transact` to the Kysely instance. Kysely freezes its internal props, not the
 * instance, so properties can be added; they are non-enumerable so logging or spreading the
 * instance shows Kysely's own shape. `transact` defaults to Kysely's own `transaction().execute`.
 */
export function createAppDatabase<DB = any>(
  kysely: Kysely<DB>,
  kind: DatabaseKind,
  model: SchemaModel,
  transact?: Transact,
  hub?: LiveHub,
  limits: Required<QueryLimits> = DEFAULT_QUERY_LIMITS,
  queue: QueueAfterCommit = () => false,
  onDemand?: OnDemand,
): AppDatabase<DB> {
  const afterCommit: AppDatabase<DB>["afterCommit"] = async (fn) => {
    if (!queue(fn)) await fn();
  };
  const run: Transact = transact ?? ((fn) => (kysely as Kysely<any>).transaction().execute(fn));
  const outer: AppDatabase<DB>["transact"] = (fn) =>
    run((trx) => {
      // With the dialect layer's re-entrant `transact`, a nested call goes back through it and
      // becomes a savepoint of the open transaction. Kysely's own transactions cannot nest, so
      // without it a nested call joins the open transaction.
      const nested: AppDatabase<DB>["transact"] = transact ? outer : (inner) => inner(handle);
      const handle: AppDatabase<DB> = attach(trx as Kysely<DB>, kind, model, nested, hub, limits, afterCommit);
      return fn(handle);
    });
  const db = attach(kysely, kind, model, outer, hub, limits, afterCommit);
  if (onDemand) Object.defineProperty(db, ON_DEMAND, { value: onDemand, enumerable: false });
  return db;
}

function attach<DB>(
  instance: Kysely<DB>,
  kind: DatabaseKind,
  model: SchemaModel,
  transact: AppDatabase<DB>["transact"],
  hub: LiveHub | undefined,
  limits: Required<QueryLimits>,
  afterCommit: AppDatabase<DB>["afterCommit"],
): AppDatabase<DB> {
  if (Object.hasOwn(instance, "query")) return instance as AppDatabase<DB>;
  if (Object.isFrozen(instance)) throw new TypeError("The Kysely instance is frozen; cannot attach query and transact");
  Object.defineProperties(instance, {
    query: { value: createQueryApi<DB>(instance as Kysely<any>, kind, model, hub, limits), enumerable: false },
    transact: { value: transact, enumerable: false },
    afterCommit: { value: afterCommit, enumerable: false },
  });
  return instance as AppDatabase<DB>;
}
