import { AsyncLocalStorage } from "node:async_hooks";
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type Transaction,
  type TransactionSettings,
} from "kysely";
import { ChangeFeed, type ChangeEvent } from "../changes.js";
import { applySetting, forgetSetting, inlined, withoutInlined } from "../write-setting.js";
import type { DatabaseAbout } from "../../contracts/resources.js";

/**
 * Reentrant transactions for any dialect.
 *
 * Inside `transact(db, fn)`, a query made on the outer `db` (rather than on the
 * transaction handle) joins the open transaction instead of asking the driver for a
 * connection. On PGlite and SQLite, with their single connection, asking would wait for
 * the transaction to finish: a deadlock. On a pg pool it would run outside the
 * transaction; joining gives every dialect the same meaning.
 *
 * A transaction begun on the outer `db` inside `transact` (a nested `transact`, or a
 * direct `db.transaction()`) becomes a savepoint of the open transaction: it commits with
 * the outer one, and when it fails only its own work is undone. Such nested transactions
 * must run one after another, not concurrently, as savepoints on one connection are a stack.
 */

/** The transaction open in the current async context. */
interface Scope {
  db: Kysely<any>;
  connection?: DatabaseConnection;
  closed?: boolean;
  /** On demand (`transactOnDemand`): the first statement begins the transaction, until `settle()`. */
  lazy?: boolean;
  /** The on-demand transaction's connection, once its first statement asked for it. */
  opening?: Promise<DatabaseConnection>;
}

let savepoints = 0;

/** Work to run once the transaction commits (`afterCommit`), held in order with its change events. */
interface Deferred {
  readonly afterCommit: () => unknown;
}
type Pending = ChangeEvent | Deferred;

function pendingOf(connection: DatabaseConnection): Pending[] | undefined {
  return connection instanceof TrackedConnection ? connection.pending : undefined;
}

/**
 * A driver connection that records the writes made on it for the change feed: at once outside a
 * transaction (autocommit), held in `pending` inside one until it commits.
 */
class TrackedConnection implements DatabaseConnection {
  pending: Pending[] | undefined;
  /** Kysely's own savepoints (`trx.savepoint(name)`): how many changes were pending at each. */
  readonly marks = new Map<string, number>();

  constructor(
    readonly inner: DatabaseConnection,
    readonly feed: ChangeFeed,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const setting = this.feed.writeSetting;
    if (setting && this.feed.writes(query)) {
      const carried = inlined(setting, query);
      if (carried) return this.#record<R>(query, this.inner.executeQuery<R>(carried).then((result) => withoutInlined(query, result)));
      return applySetting(setting, this.inner).then(() => this.#record<R>(query, this.inner.executeQuery<R>(query)));
    }
    return this.#record<R>(query, this.inner.executeQuery<R>(query));
  }

  #record<R>(query: CompiledQuery, executed: Promise<QueryResult<R>>): Promise<QueryResult<R>> {
    if (!this.feed.active) return executed;
    return executed.then((result) => {
      for (const change of this.feed.changesOf(query, result)) {
        if (this.pending) this.pending.push(change);
        else this.feed.emit(change);
      }
      return result;
    });
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

function innerOf(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof TrackedConnection ? connection.inner : connection;
}

/** A borrowed view of the transaction's connection: never released, never begun. */
class JoinedConnection implements DatabaseConnection {
  savepoint: string | undefined;
  /** How many changes the transaction held when this savepoint began (a rollback drops the rest). */
  mark = 0;

  constructor(readonly target: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.target.executeQuery<R>(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.target.streamQuery<R>(query, chunkSize);
  }
}

export class ReentrantDialect implements Dialect {
  readonly #scopes = new AsyncLocalStorage<Scope>();
  /** Committed writes made through this dialect; the kernel listens when a plugin asks for changes. */
  readonly changes = new ChangeFeed();
  /** The engine and where its data lives, for the start banner; set by the dialect factories. */
  about: DatabaseAbout | undefined;

  #driver: ReentrantDriver | undefined;

  constructor(readonly inner: Dialect) {}

  createDriver(): Driver {
    return (this.#driver = new ReentrantDriver(this.inner.createDriver(), this.#scopes, this.changes));
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }

  /** True when called inside `transact` while its transaction is open. */
  get inTransaction(): boolean {
    const scope = this.#scopes.getStore();
    return !!scope?.connection && !scope.closed;
  }

  /**
   * Queues `fn` to run once the transaction open in this async context commits (dropped when it, or
   * the savepoint open now, rolls back). False when no transaction is open here: nothing was queued.
   */
  afterCommit(fn: () => unknown): boolean {
    const scope = this.#scopes.getStore();
    const pending = scope?.connection && !scope.closed ? pendingOf(scope.connection instanceof JoinedConnection ? scope.connection.target : scope.connection) : undefined;
    if (!pending) return false;
    pending.push({ afterCommit: fn });
    return true;
  }

  /** Itself: `reentrant()` also reads as `{ dialect, transact }`. */
  get dialect(): this {
    return this;
  }

  /**
   * Runs `fn` in a transaction on `db` (a Kysely instance built on this dialect). Commits
   * when `fn` resolves; rolls back and rethrows when it throws. Called inside another
   * `transact`, it joins that transaction through a savepoint. Bound, so it can be passed around.
   */
  readonly transact = async <DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> => {
    const scope = this.#scopes.getStore();
    // Inside an on-demand transaction not yet begun: begin it, so this one nests in it.
    if (scope?.lazy && !scope.closed && !scope.connection) await this.#driver!.begin(scope);
    if (scope?.connection && !scope.closed) {
      // The outer Kysely instance: a Transaction cannot open another transaction.
      return (scope.db as Kysely<DB>).transaction().execute(fn);
    }
    if (db.isTransaction) {
      return Promise.reject(new Error("transact() needs the Kysely instance, not a transaction handle."));
    }
    return this.#scopes.run({ db }, () => db.transaction().execute(fn));
  };

  /**
   * Runs `fn` in a transaction that begins with the first statement it sends, through any handle in
   * this call chain, so a `fn` that sends none costs no BEGIN and COMMIT. `settle()` ends the on-demand
   * part: later statements join the transaction when it has begun, and otherwise run on their own
   * (autocommit); it says whether it has begun. Commits when `fn` resolves, rolls back when it throws.
   * Inside an open transaction it is a nested `transact` (a savepoint).
   */
  readonly transactOnDemand = async <DB, T>(db: Kysely<DB>, fn: (settle: () => boolean) => Promise<T>): Promise<T> => {
    const outer = this.#scopes.getStore();
    if (outer?.connection && !outer.closed) return this.transact(db, () => fn(() => true));
    const scope: Scope = { db, lazy: true };
    const settle = () => {
      scope.lazy = false;
      return scope.opening !== undefined;
    };
    let result: T;
    try {
      result = await this.#scopes.run(scope, () => fn(settle));
    } catch (error) {
      await this.#driver!.end(scope, false);
      throw error;
    }
    await this.#driver!.end(scope, true);
    return result;
  };
}

/**
 * Wraps a dialect for reentrant transactions; a dialect already wrapped is returned as is.
 * The result is a Dialect that also reads as `{ dialect, transact }`.
 */
export function reentrant(dialect: Dialect): ReentrantDialect {
  return dialect instanceof ReentrantDialect ? dialect : new ReentrantDialect(dialect);
}

/** A failure after the commit cannot undo it: it is logged, never thrown into the committed write. */
function runDeferred(fn: () => unknown): void {
  try {
    Promise.resolve(fn()).catch((error) => console.error("[trellis] work queued for after the commit failed:", error));
  } catch (error) {
    console.error("[trellis] work queued for after the commit failed:", error);
  }
}

class ReentrantDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly scopes: AsyncLocalStorage<Scope>,
    private readonly feed: ChangeFeed,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const scope = this.scopes.getStore();
    if (scope?.connection && !scope.closed) return new JoinedConnection(scope.connection);
    if (scope?.lazy && !scope.closed) return new JoinedConnection(await this.begin(scope));
    return new TrackedConnection(await this.inner.acquireConnection(), this.feed);
  }

  /** Begins an on-demand scope's transaction (once): its connection is held until `end`. */
  begin(scope: Scope): Promise<DatabaseConnection> {
    return (scope.opening ??= (async () => {
      const connection = new TrackedConnection(await this.inner.acquireConnection(), this.feed);
      try {
        await this.inner.beginTransaction(connection.inner, {});
      } catch (error) {
        await this.inner.releaseConnection(connection.inner);
        throw error;
      }
      connection.pending = [];
      connection.marks.clear();
      scope.connection = connection;
      return connection;
    })());
  }

  /** Commits (or rolls back) an on-demand scope's transaction, if it began, and releases its connection. */
  async end(scope: Scope, commit: boolean): Promise<void> {
    scope.closed = true;
    const connection = await scope.opening?.catch(() => undefined);
    if (!connection) return;
    try {
      if (!commit) return await this.rollbackTransaction(connection);
      try {
        await this.commitTransaction(connection);
      } catch (error) {
        await this.rollbackTransaction(connection).catch(() => undefined);
        throw error;
      }
    } finally {
      await this.inner.releaseConnection(innerOf(connection));
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (!(connection instanceof JoinedConnection)) await this.inner.releaseConnection(innerOf(connection));
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (connection instanceof JoinedConnection) {
      // Isolation settings cannot change mid-transaction; the savepoint inherits them.
      connection.savepoint = `trellis_sp_${++savepoints}`;
      await connection.executeQuery(CompiledQuery.raw(`savepoint ${connection.savepoint}`));
      connection.mark = pendingOf(connection.target)?.length ?? 0;
      return;
    }
    await this.inner.beginTransaction(innerOf(connection), settings);
    if (connection instanceof TrackedConnection) {
      connection.pending = [];
      connection.marks.clear();
    }
    const scope = this.scopes.getStore();
    if (scope && !scope.connection && !scope.closed) scope.connection = connection;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof JoinedConnection) {
      await connection.executeQuery(CompiledQuery.raw(`release savepoint ${connection.savepoint}`));
      return;
    }
    this.#close(connection);
    await this.inner.commitTransaction(innerOf(connection));
    if (connection instanceof TrackedConnection && connection.pending) {
      const committed = connection.pending;
      connection.pending = undefined;
      for (const item of committed) {
        if ("afterCommit" in item) runDeferred(item.afterCommit);
        else this.feed.emit(item);
      }
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof JoinedConnection) {
      const name = connection.savepoint;
      await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${name}`));
      await connection.executeQuery(CompiledQuery.raw(`release savepoint ${name}`));
      const pending = pendingOf(connection.target);
      if (pending) pending.length = Math.min(pending.length, connection.mark);
      forgetSetting(innerOf(connection.target));
      return;
    }
    this.#close(connection);
    if (connection instanceof TrackedConnection) connection.pending = undefined;
    forgetSetting(innerOf(connection));
    await this.inner.rollbackTransaction(innerOf(connection));
  }

  /**
   * From commit on, late queries of the scope (a promise `fn` did not await) take the
   * normal path again: the connection is about to be released to others.
   */
  #close(connection: DatabaseConnection): void {
    const scope = this.scopes.getStore();
    if (scope?.connection === connection) scope.closed = true;
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    await this.#need("savepoint")(connection, name, compile);
    if (connection instanceof TrackedConnection && connection.pending) connection.marks.set(name, connection.pending.length);
  }

  /** The changes made since the savepoint are undone with it. */
  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    await this.#need("rollbackToSavepoint")(connection, name, compile);
    forgetSetting(innerOf(connection));
    const mark = connection instanceof TrackedConnection ? connection.marks.get(name) : undefined;
    if (mark !== undefined && connection instanceof TrackedConnection && connection.pending) connection.pending.length = Math.min(connection.pending.length, mark);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    return this.#need("releaseSavepoint")(connection, name, compile);
  }

  #need<K extends "savepoint" | "rollbackToSavepoint" | "releaseSavepoint">(method: K): NonNullable<Driver[K]> {
    const fn = this.inner[method];
    if (!fn) throw new Error(`The \`${method}\` method is not supported by this driver`);
    return ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) =>
      fn.call(this.inner, innerOf(connection), name, compile)) as NonNullable<Driver[K]>;
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
