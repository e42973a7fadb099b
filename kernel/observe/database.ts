import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from "kysely";
import type { Instrumentation } from "./instrumentation.js";

/**
 * The app's dialect with its statements observed, at Kysely's driver level: whatever runs below
 * (a pg pool, SQLite, the embedded database in process or in a worker) is seen the same way, and
 * only statements the app sends (not the BEGIN/COMMIT a driver sends itself). With no observer the
 * driver hands out the connection it was given and adds nothing to a statement.
 *
 * Observing adds no step to the statement's own promise chain: the connection Kysely gets is the
 * driver's own, its `executeQuery` observed in place the first time it is handed out, and the wait
 * for it is timed by a reaction beside Kysely's, not in front of it. A `.then` in the chain costs
 * each statement two more turns of the microtask queue (about a microsecond on a busy machine: the
 * larger part of what `/metrics` cost per request).
 */
export function observedDialect(inner: Dialect, instrumentation: Instrumentation): Dialect {
  return {
    createDriver: (): Driver => new ObservedDriver(inner.createDriver(), instrumentation),
    createQueryCompiler: (): QueryCompiler => inner.createQueryCompiler(),
    createAdapter: (): DialectAdapter => inner.createAdapter(),
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => inner.createIntrospector(db),
  };
}

/**
 * Routes a connection's statements through the observer (read per statement: it may be added
 * later), except while the driver itself uses the connection (`busy`: BEGIN, COMMIT, savepoints).
 */
function observeConnection(connection: DatabaseConnection, instrumentation: Instrumentation, busy: WeakSet<DatabaseConnection>): void {
  const execute = connection.executeQuery;
  connection.executeQuery = function executeQuery<R>(this: DatabaseConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    const statement = instrumentation.statement;
    if (!statement || busy.has(this)) return execute.call(this, query) as Promise<QueryResult<R>>;
    return statement(query.sql, () => execute.call(this, query) as Promise<QueryResult<R>>);
  };
}

const ignore = () => {};

class ObservedDriver implements Driver {
  /** Connections whose `executeQuery` is observed already. */
  readonly #observed = new WeakSet<DatabaseConnection>();
  /** Connections the driver is using for its own statements (not observed). */
  readonly #busy = new WeakSet<DatabaseConnection>();

  constructor(
    readonly inner: Driver,
    readonly instrumentation: Instrumentation,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    const { statement, connectionWait } = this.instrumentation;
    const acquired = this.inner.acquireConnection();
    if (!statement && !connectionWait) return acquired;
    const started = connectionWait ? performance.now() : 0;
    // Registered before Kysely awaits `acquired`, so it runs first: the connection is observed
    // before its first statement. A failed acquire is Kysely's to report.
    acquired.then((connection) => {
      connectionWait?.(performance.now() - started);
      if (statement && !this.#observed.has(connection)) {
        this.#observed.add(connection);
        observeConnection(connection, this.instrumentation, this.#busy);
      }
    }, ignore);
    return acquired;
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  /** Runs the driver's own use of `connection` with its statements unobserved. */
  #own<T>(connection: DatabaseConnection, run: () => Promise<T>): Promise<T> {
    if (!this.#observed.has(connection)) return run();
    this.#busy.add(connection);
    const done = () => void this.#busy.delete(connection);
    let result: Promise<T>;
    try {
      result = run();
    } catch (error) {
      done();
      throw error;
    }
    result.then(done, done);
    return result;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#own(connection, () => this.inner.beginTransaction(connection, settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#own(connection, () => this.inner.commitTransaction(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#own(connection, () => this.inner.rollbackTransaction(connection));
  }

  // Kysely probes these three for support, so they exist only when the inner driver has them.
  get savepoint() {
    const fn = this.inner.savepoint;
    return fn && ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) => this.#own(connection, () => fn.call(this.inner, connection, name, compile)));
  }

  get rollbackToSavepoint() {
    const fn = this.inner.rollbackToSavepoint;
    return fn && ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) => this.#own(connection, () => fn.call(this.inner, connection, name, compile)));
  }

  get releaseSavepoint() {
    const fn = this.inner.releaseSavepoint;
    return fn && ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) => this.#own(connection, () => fn.call(this.inner, connection, name, compile)));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
