import { createQueryId, type CompiledQuery, type Kysely, type RootOperationNode } from "kysely";

/**
 * pg-boss's statements are not changes of the app's tables: a node kind the change feed does not
 * know keeps them out of it (its raw-SQL rule would read `insert into pgboss.job` as a write to a
 * table named `job`, and a webhook subscribed to such a table would feed itself).
 */
const ENGINE_STATEMENT = Object.freeze({ kind: "JobsEngineStatementNode" }) as unknown as RootOperationNode;

/** The `db` pg-boss is given: its statements, through the app's own Kysely instance. */
export interface EngineDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
  /** Resolves once no statement is in flight; later statements answer no rows. */
  close(): Promise<void>;
}

/**
 * Every statement goes through the app's Kysely instance, so it waits for the same connection as
 * the app's queries (PGlite's single connection, or the pg pool), and a statement made inside
 * `db.transact(...)` joins that transaction: a job sent there exists only if it commits.
 * Without parameters the dialects use the simple protocol, so pg-boss's multi-statement scripts
 * (install, migrations, maintenance under an advisory lock) run as one string.
 */
export function engineDb(kysely: Kysely<any>): EngineDb {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  return {
    executeSql(text, values) {
      // pg-boss completes jobs without awaiting the result: after shutdown, answer nothing rather
      // than reject into an unhandled rejection on a destroyed connection.
      if (closed) return Promise.resolve({ rows: [] });
      const query: CompiledQuery = { sql: text, parameters: (values ?? []).map(toParameter), query: ENGINE_STATEMENT, queryId: createQueryId() };
      const running = kysely.executeQuery(query).then((result) => ({ rows: result.rows as any[] }));
      inFlight.add(running);
      const forget = () => inFlight.delete(running);
      running.then(forget, forget);
      return running;
    },
    async close() {
      closed = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** pg serialises plain objects as JSON; PGlite would not know their type: do it here for both. */
function toParameter(value: unknown): unknown {
  if (value === undefined) return null;
  if (value !== null && typeof value === "object" && !(value instanceof Date) && !(value instanceof Uint8Array) && !Array.isArray(value)) {
    return JSON.stringify(value);
  }
  return value;
}
