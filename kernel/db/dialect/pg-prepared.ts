import type { CustomTypesConfig, PoolClient, QueryResult } from "pg";
import { isStale, PREPARED_LIMIT } from "./prepared.js";

/**
 * Named prepared statements on PostgreSQL through pg's `name` query option: pg parses a named
 * statement once per connection and afterwards sends only bind and execute, so the server skips
 * parsing, and once it settles on a generic plan, planning. One name per statement text, shared by
 * the pool's connections (pg requires a name to keep its text); past `limit` texts, statements run
 * unnamed. Statements without parameters stay unnamed: they may hold several statements.
 */
export class StatementNames {
  readonly #names = new Map<string, string>();

  constructor(private readonly limit = PREPARED_LIMIT) {}

  /** The name for this text, or undefined once `limit` texts are named. */
  nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < this.limit) this.#names.set(text, (name = `trellis_${this.#names.size + 1}`));
    return name;
  }

  /** Runs `text` named when it has parameters; a statement gone stale on the server is dropped and run once unnamed. */
  async query(client: PoolClient, text: string, values: unknown[], types: CustomTypesConfig): Promise<QueryResult> {
    const name = values.length ? this.nameOf(text) : undefined;
    if (!name) return client.query({ text, values, types });
    try {
      return await client.query({ name, text, values, types });
    } catch (error) {
      if (!isStale(error)) throw error;
      // Dropped by DEALLOCATE or DISCARD, or its result's columns changed under it (a migration
      // run by another replica): forget it on this connection so the next use parses it again.
      // Only once the server no longer has it: inside a transaction the error has aborted it and
      // DEALLOCATE fails, so the statement stays (still stale) until its next use outside one.
      const gone = await client.query(`deallocate "${name}"`).then(
        () => true,
        (failed: unknown) => (failed as { code?: string } | null)?.code === "26000",
      );
      if (gone) delete (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements?.[name];
      // Inside a transaction the error has aborted it, and the retry fails: the first error is the one to see.
      return client.query({ text, values, types }).catch(() => Promise.reject(error));
    }
  }
}
