import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type TransactionSettings,
} from "kysely";
import { ConnectionMutex, DEFAULT_ACQUIRE_TIMEOUT_MS } from "./mutex.js";
import { PGliteConnection, type PGliteLike } from "./pglite-connection.js";

export type { PGliteLike } from "./pglite-connection.js";

/** Same shape as Kysely 0.29's `PGliteDialectConfig`, so moving to it is an import change. */
export interface PGliteDialectConfig {
  /** A PGlite instance, or a function returning one; the function runs on the first query. */
  pglite: PGliteLike | (() => Promise<PGliteLike>);
  /** Runs once, on the connection, before the first query. */
  onCreateConnection?: (connection: DatabaseConnection) => Promise<void>;
  /**
   * How long a query waits for the single connection before failing with
   * `AcquireTimeoutError` (a long wait on PGlite means a deadlock).
   * @default 10000
   */
  acquireTimeoutMs?: number;
  /**
   * Replaces closing the instance when the Kysely instance is destroyed; `embedded()`
   * uses it so that the data-directory lock is released along with the instance.
   * @default closes the PGlite instance
   */
  onDestroy?: () => Promise<void>;
}

/**
 * Kysely dialect over one PGlite instance. Kysely 0.28 ships none, and the community one
 * lets a query from outside a transaction run inside it (and be rolled back with it):
 * here the single connection is guarded by a mutex, as Kysely's SQLite driver does.
 * The adapter is Postgres's, so the Migrator takes its advisory lock.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly config: PGliteDialectConfig) {}

  createDriver(): Driver {
    return new PGliteDriver(this.config);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

class PGliteDriver implements Driver {
  readonly #mutex: ConnectionMutex;
  #pglite: PGliteLike | undefined;
  #connection: PGliteConnection | undefined;

  constructor(private readonly config: PGliteDialectConfig) {
    this.#mutex = new ConnectionMutex("PGlite", config.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS);
  }

  async init(): Promise<void> {
    const { pglite } = this.config;
    const instance = typeof pglite === "function" ? await pglite() : pglite;
    if (instance.closed) throw new Error("The PGlite instance is already closed.");
    await instance.waitReady;
    this.#pglite = instance;
    this.#connection = new PGliteConnection(instance);
    await this.config.onCreateConnection?.(this.#connection);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    return this.#connection!;
  }

  async releaseConnection(): Promise<void> {
    this.#mutex.unlock();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as PGliteConnection).begin(settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).rollback();
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoteIdent(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoteIdent(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${quoteIdent(name)}`));
  }

  async destroy(): Promise<void> {
    if (this.config.onDestroy) await this.config.onDestroy();
    else if (this.#pglite && !this.#pglite.closed) await this.#pglite.close();
  }
}
