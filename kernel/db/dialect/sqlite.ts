import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDatabase,
} from "kysely";
import { resolve } from "node:path";
import { refuseDeepParameters, toPlainBytes, toSqliteParameter } from "./family.js";
import { ConnectionMutex, DEFAULT_ACQUIRE_TIMEOUT_MS } from "./mutex.js";
import { reentrant, type ReentrantDialect } from "./reentrant.js";
import { importPeer } from "../../runtime/peers.js";

export type SqliteDialectOptions = (
  | {
      /** Database file for better-sqlite3 (loaded on first use). `:memory:` for a private in-memory one. */
      filename: string;
    }
  | {
      /** An open better-sqlite3 database, or a function returning one. */
      database: SqliteDatabase | (() => Promise<SqliteDatabase>);
    }
) & {
  /**
   * How long a query waits for the single connection before failing with `AcquireTimeoutError`.
   * @default 10000
   */
  acquireTimeoutMs?: number;
};

/**
 * Kysely's SQLite dialect over better-sqlite3, as Trellis needs it: foreign keys enforced,
 * Date, boolean and JSON parameters bound, BLOBs read as plain Uint8Arrays, and a bounded
 * wait for the single connection. Reentrant, so `transact` works without deadlocks.
 */
export function sqliteDialect(options: SqliteDialectOptions): ReentrantDialect {
  const database = "database" in options ? options.database : () => openFile(options.filename);
  const timeoutMs = options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
  const dialect = reentrant(new TrellisSqliteDialect({ database, onCreateConnection: enforceForeignKeys }, timeoutMs));
  const location = "filename" in options ? (options.filename === ":memory:" ? ":memory:" : resolve(options.filename)) : "an open better-sqlite3 database";
  dialect.about = { engine: "SQLite", location };
  return dialect;
}

async function openFile(filename: string): Promise<SqliteDatabase> {
  // better-sqlite3 is an optional peer: loaded only when a SQLite database is opened.
  const { default: Database } = await importPeer<{ default: typeof import("better-sqlite3") }>("better-sqlite3", "A SQLite database file (sqliteDialect({ filename }))");
  return new Database(filename) as unknown as SqliteDatabase;
}

/** SQLite leaves foreign keys off unless asked, per connection; a refusal must not pass silently. */
async function enforceForeignKeys(connection: DatabaseConnection): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw("pragma foreign_keys = on"));
  const { rows } = await connection.executeQuery<{ foreign_keys: number }>(CompiledQuery.raw("pragma foreign_keys"));
  if (rows[0]?.foreign_keys !== 1) throw new Error("SQLite did not enable foreign keys (PRAGMA foreign_keys = ON).");
}

type DriverConfig = ConstructorParameters<typeof SqliteDriver>[0];

class TrellisSqliteDialect extends SqliteDialect {
  constructor(
    private readonly driverConfig: DriverConfig,
    private readonly timeoutMs: number,
  ) {
    super(driverConfig);
  }

  override createDriver(): Driver {
    return new TrellisSqliteDriver(this.driverConfig, this.timeoutMs);
  }
}

/**
 * Kysely's driver with a mutex that gives up after a time limit in front of its own
 * (which waits forever), and values converted at the connection, so every Kysely
 * instance on this dialect gets them without registering a plugin.
 */
class TrellisSqliteDriver extends SqliteDriver {
  readonly #mutex: ConnectionMutex;
  #connection: SqliteValuesConnection | undefined;

  constructor(config: DriverConfig, timeoutMs: number) {
    super(config);
    this.#mutex = new ConnectionMutex("SQLite", timeoutMs);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    try {
      const inner = await super.acquireConnection();
      return (this.#connection ??= new SqliteValuesConnection(inner));
    } catch (error) {
      this.#mutex.unlock();
      throw error;
    }
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.#mutex.unlock();
  }
}

class SqliteValuesConnection implements DatabaseConnection {
  constructor(private readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(withSqliteParameters(query));
    result.rows.forEach(toPlainBytes);
    return result;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    for await (const result of this.inner.streamQuery<R>(withSqliteParameters(query), chunkSize)) {
      result.rows.forEach(toPlainBytes);
      yield result;
    }
  }
}

function withSqliteParameters(query: CompiledQuery): CompiledQuery {
  refuseDeepParameters(query.parameters);
  const parameters = query.parameters.map(toSqliteParameter);
  return parameters.every((value, i) => value === query.parameters[i]) ? query : { ...query, parameters };
}
