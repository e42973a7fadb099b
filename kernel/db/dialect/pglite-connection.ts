import type { PGliteInterface, Results, Transaction } from "@electric-sql/pglite";
import type { CompiledQuery, DatabaseConnection, QueryResult, TransactionSettings } from "kysely";
import { refuseDeepParameters } from "./family.js";
import { canPrepare, preparedStatementsOf, type PreparedStatements } from "./pglite-prepared.js";

/** The part of a PGlite instance the dialect uses (a worker client fits too). */
export type PGliteLike = Pick<
  PGliteInterface,
  "query" | "exec" | "transaction" | "close" | "closed" | "waitReady"
>;

const COUNTED = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * The one connection to a PGlite instance. The driver's mutex guarantees a single holder,
 * so while a transaction is open every query of the holder goes to it and nobody else's
 * can. Transactions run inside `pglite.transaction()`, which also makes PGlite hold back
 * direct users of the instance (the live extension) until commit.
 */
export class PGliteConnection implements DatabaseConnection {
  #tx: Transaction | undefined;
  #finish: ((commit: boolean) => void) | undefined;
  #done: Promise<unknown> | undefined;
  /** On an instance in this thread; the database thread's client prepares on the thread instead. */
  readonly #prepared: PreparedStatements | undefined;

  constructor(private readonly pglite: PGliteLike) {
    this.#prepared = canPrepare(pglite) ? preparedStatementsOf(pglite) : undefined;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    refuseDeepParameters(query.parameters);
    const target = this.#tx ?? this.pglite;
    // Without parameters use the simple protocol, as pg does, so one raw string may hold
    // several statements (migrations); the last statement's result is the answer. With them,
    // a named prepared statement per statement text.
    const result: Results<R> =
      query.parameters.length === 0
        ? ((await target.exec(query.sql)).at(-1) as Results<R>)
        : this.#prepared
          ? await this.#prepared.query<R>(query.sql, query.parameters, this.#tx)
          : await target.query<R>(query.sql, query.parameters as unknown[]);
    return {
      rows: result.rows ?? [],
      numAffectedRows:
        result.command && COUNTED.has(result.command) ? BigInt(result.rowCount ?? 0) : undefined,
    };
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGlite does not support streaming queries.");
  }

  async begin(settings: TransactionSettings): Promise<void> {
    let started!: (tx: Transaction) => void;
    const begun = new Promise<Transaction>((resolve) => (started = resolve));
    const decision = new Promise<boolean>((resolve) => (this.#finish = resolve));
    const done = this.pglite.transaction(async (tx) => {
      started(tx);
      // pglite.transaction() commits when this returns; a rollback closes it first.
      if (!(await decision)) await tx.rollback();
    });
    this.#done = done;
    // When BEGIN itself fails the callback never runs: surface that error instead of waiting.
    const ended = done.then(() => {
      throw new Error("PGlite transaction ended before it began");
    });
    ended.catch(() => undefined);
    try {
      this.#tx = await Promise.race([begun, ended]);
      const mode = [settings.isolationLevel && `isolation level ${settings.isolationLevel}`, settings.accessMode];
      if (mode.some(Boolean)) await this.#tx.exec(`set transaction ${mode.filter(Boolean).join(" ")}`);
    } catch (error) {
      // Kysely only rolls back a transaction that began; this one must not stay open.
      await this.rollback();
      throw error;
    }
  }

  async commit(): Promise<void> {
    await this.#end(true);
  }

  /** Safe after a failed commit too: Kysely rolls back then, and there is nothing left. */
  async rollback(): Promise<void> {
    await this.#end(false).catch(() => undefined);
  }

  async #end(commit: boolean): Promise<void> {
    const done = this.#done;
    this.#finish?.(commit);
    this.#tx = undefined;
    this.#finish = undefined;
    this.#done = undefined;
    await done;
  }
}
