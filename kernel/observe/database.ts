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
 */
export function observedDialect(inner: Dialect, instrumentation: Instrumentation): Dialect {
  return {
    createDriver: (): Driver => new ObservedDriver(inner.createDriver(), instrumentation),
    createQueryCompiler: (): QueryCompiler => inner.createQueryCompiler(),
    createAdapter: (): DialectAdapter => inner.createAdapter(),
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => inner.createIntrospector(db),
  };
}

/** A connection whose statements go through the observer; the driver gets `inner` back. */
class ObservedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    readonly instrumentation: Instrumentation,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.instrumentation.statement;
    if (!statement) return this.inner.executeQuery<R>(query);
    return statement(query.sql, () => this.inner.executeQuery<R>(query));
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection) => (connection instanceof ObservedConnection ? connection.inner : connection);

class ObservedDriver implements Driver {
  /** Each pooled connection's observed twin, made once rather than on every acquire. */
  readonly #observed = new WeakMap<DatabaseConnection, ObservedConnection>();

  constructor(
    readonly inner: Driver,
    readonly instrumentation: Instrumentation,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    const { statement, connectionWait } = this.instrumentation;
    if (!statement && !connectionWait) return this.inner.acquireConnection();
    const started = connectionWait ? performance.now() : 0;
    return this.inner.acquireConnection().then((connection) => {
      connectionWait?.(performance.now() - started);
      if (!statement) return connection;
      let observed = this.#observed.get(connection);
      if (!observed) this.#observed.set(connection, (observed = new ObservedConnection(connection, this.instrumentation)));
      return observed;
    });
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(innerOf(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }

  // Kysely probes these three for support, so they exist only when the inner driver has them.
  get savepoint() {
    const fn = this.inner.savepoint;
    return fn && ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) => fn.call(this.inner, innerOf(connection), name, compile));
  }

  get rollbackToSavepoint() {
    const fn = this.inner.rollbackToSavepoint;
    return fn && ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) => fn.call(this.inner, innerOf(connection), name, compile));
  }

  get releaseSavepoint() {
    const fn = this.inner.releaseSavepoint;
    return fn && ((connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) => fn.call(this.inner, innerOf(connection), name, compile));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
