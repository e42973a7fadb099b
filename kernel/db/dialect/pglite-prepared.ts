import type { messages, PGlite, Results, Transaction } from "@electric-sql/pglite";
import { isStale, PREPARED_LIMIT } from "./prepared.js";

type BackendMessage = messages.BackendMessage;
type RowDescriptionMessage = messages.RowDescriptionMessage;
type DataRowMessage = messages.DataRowMessage;
type CommandCompleteMessage = messages.CommandCompleteMessage;
type Parser = (text: string, type: number) => unknown;
/** Commands whose tag's count PGlite adds to `affectedRows`. */
const AFFECTING = new Set(["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"]);

/**
 * Named prepared statements on one PGlite instance. `pglite.query()` parses, describes and plans
 * every statement again, in six calls into the WebAssembly instance (parse, describe, bind,
 * describe, execute, sync). Here each statement text is parsed and described once under a name
 * (one call), and every later run is one call (bind, execute, sync in one buffer), reusing the
 * parsed statement and, once PostgreSQL settles on a generic plan, its plan. PGlite's `query()`
 * takes no statement name, so this speaks the protocol through its public `execProtocolStream`.
 *
 * Only a real PGlite instance qualifies (see `canPrepare`); the database thread's client sends
 * its statements to the thread, which prepares them there.
 */

/** The part of PGlite this drives: its protocol entry point, its mutexes and its type tables. */
export type PGliteEngine = Pick<PGlite, "execProtocolStream" | "runExclusive" | "syncToFs" | "query" | "parsers" | "serializers" | "closed"> & {
  /** PGlite's transaction mutex: a statement outside a transaction waits for open ones, as `query()` does. */
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
};

interface Statement {
  name: string;
  /** Parameter type oids, from the statement's description: they pick each value's serializer. */
  types: number[];
  /** The result's columns, described once (empty for a statement that returns no rows). */
  fields: { name: string; dataTypeID: number }[];
  /** Each column's text parser, looked up once (as PGlite's `parseType` would for every value). */
  parsers: (Parser | undefined)[];
}

type PgliteModule = typeof import("@electric-sql/pglite");
/** PGlite's protocol helpers, loaded with the first prepared statement (an app on another database never loads PGlite). */
let lib: { parse: PgliteModule["parse"]; protocol: PgliteModule["protocol"]; types: PgliteModule["types"]; SYNC: Uint8Array; EXECUTE: Uint8Array } | undefined;
async function loadLib(): Promise<NonNullable<typeof lib>> {
  if (!lib) {
    const { parse, protocol, types } = await import("@electric-sql/pglite");
    lib = { parse, protocol, types, SYNC: protocol.serialize.sync(), EXECUTE: protocol.serialize.execute({}) };
  }
  return lib;
}

export function canPrepare(pglite: object): pglite is PGliteEngine {
  return typeof (pglite as Partial<PGliteEngine>).execProtocolStream === "function" && typeof (pglite as Partial<PGliteEngine>)._runExclusiveTransaction === "function";
}

const byInstance = new WeakMap<PGliteEngine, PreparedStatements>();

/** The instance's prepared statements: one set per instance, shared by every dialect over it (names must not collide). */
export function preparedStatementsOf(pg: PGliteEngine): PreparedStatements {
  let prepared = byInstance.get(pg);
  if (!prepared) byInstance.set(pg, (prepared = new PreparedStatements(pg)));
  return prepared;
}

export class PreparedStatements {
  readonly #statements = new Map<string, Statement>();
  #named = 0;

  constructor(
    private readonly pg: PGliteEngine,
    private readonly limit = PREPARED_LIMIT,
  ) {}

  /** How many statement texts are prepared (one per shape). */
  get size(): number {
    return this.#statements.size;
  }

  /** Runs one statement with parameters, inside `tx` when given (PGlite's transaction holds its mutex then). */
  query<T>(sql: string, params: readonly unknown[], tx?: Transaction): Promise<Results<T>> {
    if (!this.#statements.has(sql) && this.#statements.size >= this.limit) return (tx ?? this.pg).query<T>(sql, params as unknown[]);
    const run = () => this.pg.runExclusive(() => this.#run<T>(sql, params, tx !== undefined));
    if (!lib) return loadLib().then(() => (tx ? run() : this.pg._runExclusiveTransaction(run)));
    return tx ? run() : this.pg._runExclusiveTransaction(run);
  }

  async #run<T>(sql: string, params: readonly unknown[], inTransaction: boolean): Promise<Results<T>> {
    if (this.pg.closed) throw new Error("PGlite is closed");
    let statement = this.#statements.get(sql) ?? (await this.#prepare(sql, params));
    let messages: BackendMessage[];
    try {
      messages = await this.#execute(statement, params);
    } catch (error) {
      // The statement was dropped (DEALLOCATE, DISCARD) or its result's columns changed under it
      // (a migration): forget it; outside a transaction, prepare it again and run it once more.
      if (!isStale(error)) throw withQuery(error, sql, params);
      this.#statements.delete(sql);
      await this.#close(statement);
      if (inTransaction) throw withQuery(error, sql, params);
      statement = await this.#prepare(sql, params);
      messages = await this.#execute(statement, params).catch((again: unknown) => Promise.reject(withQuery(again, sql, params)));
    }
    if (!inTransaction) await this.pg.syncToFs();
    return results<T>(statement, messages);
  }

  async #prepare(sql: string, params: readonly unknown[]): Promise<Statement> {
    const { protocol, parse, types, SYNC } = lib!;
    const name = `trellis_${++this.#named}`;
    let described: BackendMessage[];
    try {
      described = await this.pg.execProtocolStream(
        concat([protocol.serialize.parse({ name, text: sql }), protocol.serialize.describe({ type: "S", name }), SYNC]),
        { syncToFs: false },
      );
    } catch (error) {
      throw withQuery(error, sql, params);
    }
    const description = described.find((message): message is RowDescriptionMessage => message.name === "rowDescription");
    const fields = (description?.fields ?? []).map((field) => ({ name: field.name, dataTypeID: field.dataTypeID }));
    const statement: Statement = {
      name,
      types: parse.parseDescribeStatementResults(described),
      fields,
      parsers: fields.map(({ dataTypeID }) => (this.pg.parsers[dataTypeID] ?? (types.parsers as Record<number, Parser>)[dataTypeID]) as Parser | undefined),
    };
    this.#statements.set(sql, statement);
    return statement;
  }

  #execute(statement: Statement, params: readonly unknown[]): Promise<BackendMessage[]> {
    const { protocol, EXECUTE, SYNC } = lib!;
    const values = params.map((param, i) => {
      // As `pglite.query()` serialises a parameter: by its type's serializer, else its text.
      if (param === null || param === undefined) return null;
      const serialize = this.pg.serializers[statement.types[i]!];
      return serialize ? serialize(param) : String(param);
    });
    return this.pg.execProtocolStream(concat([protocol.serialize.bind({ statement: statement.name, values }), EXECUTE, SYNC]), { syncToFs: false });
  }

  async #close(statement: Statement): Promise<void> {
    const { protocol, SYNC } = lib!;
    await this.pg.execProtocolStream(concat([protocol.serialize.close({ type: "S", name: statement.name }), SYNC]), { syncToFs: false }).catch(() => {});
  }
}


/**
 * The result of one run, as PGlite's `parseResults` builds it (rows as objects, the command, its
 * row count, the affected rows), with the columns and their parsers known from the description
 * instead of looked up for every value of every row.
 */
function results<T>(statement: Statement, messages: BackendMessage[]): Results<T> {
  const { fields, parsers } = statement;
  const rows: Record<string, unknown>[] = [];
  const result: Results<T> = { rows: rows as T[], fields, affectedRows: 0 };
  for (const message of messages) {
    if (message.name === "dataRow") {
      const values = (message as DataRowMessage).fields;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < fields.length; i++) {
        const text = values[i] as string | null;
        const parser = parsers[i];
        row[fields[i]!.name] = text === null ? null : parser ? parser(text, fields[i]!.dataTypeID) : text;
      }
      rows.push(row);
    } else if (message.name === "commandComplete") {
      const parts = (message as CommandCompleteMessage).text.split(" ");
      const rowCount = parseInt(parts[parts.length - 1]!, 10);
      result.command = parts[0];
      if (AFFECTING.has(parts[0]!)) result.affectedRows = rowCount;
      if (!Number.isNaN(rowCount)) result.rowCount = rowCount;
    }
  }
  return result;
}

/** PGlite's own `query()` attaches the statement to its errors (`makePGliteError`); so does this. */
function withQuery(error: unknown, sql: string, params: readonly unknown[]): unknown {
  if (lib && error instanceof lib.protocol.messages.DatabaseError) Object.assign(error, { query: sql, params, queryOptions: undefined });
  return error;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.byteLength;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
