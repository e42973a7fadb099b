import { PostgresDialect, type PostgresPool, type PostgresPoolClient } from "kysely";
import type { CustomTypesConfig, Pool, PoolClient, PoolConfig } from "pg";
import { refuseDeepParameters, textParsers, toPostgresParameter } from "./family.js";
import { reentrant, type ReentrantDialect } from "./reentrant.js";
import { explainConnectError, parsePostgresUrl, type PostgresTarget } from "./postgres-url.js";
import { importPeer } from "../../runtime/peers.js";
import { StatementNames } from "./pg-prepared.js";

/**
 * The server cancels a statement running longer than this (`statement_timeout`, a pool option), so
 * one heavy query cannot hold a connection indefinitely; migrations lift it for their own steps.
 */
export const STATEMENT_TIMEOUT_MS = 30_000;

export type PostgresDialectOptions = (
  | {
      /** `postgres://user:password@host:port/database` */
      connectionString: string;
      /** Further pg Pool options (`max`, `options`, `ssl`, `statement_timeout` (default 30000), ...). */
      poolConfig?: Omit<PoolConfig, "connectionString" | "types">;
    }
  | {
      /** An existing pg Pool. Kysely ends it when the Kysely instance is destroyed. */
      pool: Pool;
    }
) & {
  /**
   * Sends each parameterised statement as a named prepared statement (one name per statement text,
   * parsed once per connection). Turn it off behind a pooler that cannot keep prepared statements
   * per client (PgBouncer in transaction mode before 1.21, or without `max_prepared_statements`).
   * @default true
   */
  preparedStatements?: boolean;
};

/**
 * Kysely's Postgres dialect over a pg Pool, with Trellis's value rules: results parsed as
 * on PGlite, Dates sent as ISO strings. The parsers are given per pool and per query, so
 * pg's process-wide parsers stay untouched for other code. Reentrant, so `transact`
 * lets outer queries join the transaction as on the single-connection families.
 */
export function postgresDialect(options: PostgresDialectOptions): ReentrantDialect {
  // A malformed URL is refused here, before anything slow starts.
  const target = "connectionString" in options ? parsePostgresUrl(options.connectionString) : undefined;
  const dialect = reentrant(
    new PostgresDialect({
      pool: async () => {
        // pg is an optional peer: loaded only when a PostgreSQL database is used.
        const { default: pg } = await importPeer<typeof import("pg")>("pg", "A PostgreSQL database (postgresDialect)");
        const types = trellisTypes(pg.types.getTypeParser);
        const pool =
          "pool" in options
            ? options.pool
            : new pg.Pool({ connectionTimeoutMillis: 10_000, statement_timeout: STATEMENT_TIMEOUT_MS, ...options.poolConfig, connectionString: options.connectionString, types });
        // An idle pooled connection dropped by the server (a restart, a failover, an admin's
        // pg_terminate_backend) is an 'error' event on the pool; unhandled, it would end the
        // process. The pool has already discarded that client and the next query opens a new one;
        // a query that fails meanwhile is answered 503 and reported.
        if (pool.listenerCount("error") === 0) pool.on("error", () => {});
        return new TypedPool(pool, types, target ?? poolTarget(pool), options.preparedStatements === false ? undefined : statementNamesOf(pool));
      },
    }),
  );
  // The start banner's line: the URL with its password hidden (or the pool's host and database).
  dialect.about = { engine: "PostgreSQL", location: (target ?? poolTarget((options as { pool: Pool }).pool)).shown };
  return dialect;
}

/**
 * The statement names of `pool`: one map per pool, since a name is kept per pooled connection, so
 * two dialects (or two Kysely instances of one dialect) over one pool never give one name to two texts.
 */
const namesByPool = new WeakMap<Pool, StatementNames>();
function statementNamesOf(pool: Pool): StatementNames {
  let names = namesByPool.get(pool);
  if (!names) namesByPool.set(pool, (names = new StatementNames()));
  return names;
}

/** Where a pool handed in from outside connects (pg keeps its options). */
function poolTarget(pool: Pool): PostgresTarget {
  const options = (pool as unknown as { options?: { host?: string; port?: number; database?: string; user?: string; connectionString?: string } }).options ?? {};
  if (options.connectionString) {
    try {
      return parsePostgresUrl(options.connectionString);
    } catch {
      // reported by pg itself when it connects
    }
  }
  const host = options.host ?? "localhost";
  const port = options.port ?? 5432;
  const database = options.database ?? options.user ?? "postgres";
  return { host, port, database, user: options.user, shown: `host=${host} port=${port} dbname=${database}` };
}

/** Trellis's parsers for text results; pg's defaults for everything else. */
function trellisTypes(fallback: CustomTypesConfig["getTypeParser"]): CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      (format ?? "text") === "text" && textParsers[oid]
        ? textParsers[oid]
        : fallback(oid, format)) as CustomTypesConfig["getTypeParser"],
  };
}

/**
 * Hands Kysely wrapped clients, so a pool that came from outside (created without our
 * `types`) gets the same parsing and parameters. One wrapper per client: Kysely keys its
 * connections by client.
 */
class TypedPool implements PostgresPool {
  readonly #clients = new WeakMap<PoolClient, PostgresPoolClient>();

  constructor(
    private readonly pool: Pool,
    private readonly types: CustomTypesConfig,
    private readonly target: PostgresTarget,
    /** Names for prepared statements; undefined sends every statement unnamed. */
    private readonly names: StatementNames | undefined,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw explainConnectError(error, this.target);
    }
    let wrapped = this.#clients.get(client);
    if (!wrapped) {
      // pg-pool listens for errors only while a client is idle: a connection lost while checked
      // out (a server restart mid-query) is an 'error' event that, unheard, ends the process. The
      // query in flight is rejected with the same error (answered 503), and the pool drops the
      // client when it is released.
      client.on("error", () => {});
      wrapped = {
        query: ((query: string | object, values?: readonly unknown[]) => {
          if (typeof query !== "string") return client.query(query as never);
          refuseDeepParameters(values ?? []);
          const parameters = values?.map(toPostgresParameter);
          return this.names ? this.names.query(client, query, parameters ?? [], this.types) : client.query({ text: query, values: parameters, types: this.types });
        }) as unknown as PostgresPoolClient["query"],
        release: () => client.release(),
      };
      this.#clients.set(client, wrapped);
    }
    return wrapped;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
