import type { CompiledQuery, DatabaseConnection, QueryResult } from "kysely";

/**
 * A value the database itself should see beside every write made through the app's database, so
 * triggers can read it (the audit plugin's actor: `current_setting('trellis.audit')` on PostgreSQL,
 * a one-row table on SQLite). Before a write, the dialect layer sends `statement(current())` on the
 * write's connection when that connection does not hold the value yet, inside the write's
 * transaction when it has one. A rollback forgets what the connection held (PostgreSQL undoes a
 * `set_config` with the transaction), so the next write sets it again.
 */
export interface WriteSetting {
  /** The value for writes made now (read from the caller's async context). */
  current(): string;
  /** The statement that hands `value` to the database. */
  statement(value: string): CompiledQuery;
  /**
   * PostgreSQL: an expression that sets the value for the rest of the write's transaction, given
   * the placeholder of its parameter (`set_config('x', $3, true)`). A write built by Kysely then
   * carries it in its own `RETURNING` (evaluated before the statement's AFTER triggers fire), which
   * saves the round trip of `statement`; other writes (raw SQL) still get `statement`.
   */
  inline?(placeholder: string): string;
}

/** The column the inlined setting comes back as, taken off the rows before anyone reads them. */
const INLINED = "trellis_write_setting";
const INLINABLE = new Set(["InsertQueryNode", "UpdateQueryNode", "DeleteQueryNode"]);

/** A Kysely write with the setting added to its `RETURNING`; undefined when it cannot carry it. */
export function inlined(setting: WriteSetting, query: CompiledQuery): CompiledQuery | undefined {
  const node = query.query as { kind: string; [key: string]: any };
  // Kysely compiles RETURNING last unless one of these follows it (none is PostgreSQL's).
  if (!setting.inline || !INLINABLE.has(node.kind) || node.orderBy || node.limit || node.endModifiers?.length || node.explain || node.output || node.top) return undefined;
  const expression = `${setting.inline(`$${query.parameters.length + 1}`)} as "${INLINED}"`;
  return { ...query, sql: node.returning ? `${query.sql}, ${expression}` : `${query.sql} returning ${expression}`, parameters: [...query.parameters, setting.current()] };
}

/** The result as the statement without the setting would have given it. */
export function withoutInlined<R>(query: CompiledQuery, result: QueryResult<R>): QueryResult<R> {
  if (!(query.query as { returning?: unknown }).returning) return { ...result, rows: [] };
  // Fresh objects rather than `delete`, which leaves each row a slow dictionary-mode object.
  const rows = (result.rows as Record<string, unknown>[]).map(({ [INLINED]: _, ...row }) => row);
  return { ...result, rows: rows as R[] };
}

/** What each driver connection holds, so an unchanged value costs no statement. */
const held = new WeakMap<DatabaseConnection, string>();

/** Sends the setting before a write when the connection does not hold it yet. */
export async function applySetting(setting: WriteSetting, connection: DatabaseConnection): Promise<void> {
  const value = setting.current();
  if (held.get(connection) === value) return;
  await connection.executeQuery(setting.statement(value));
  held.set(connection, value);
}

/** After a rollback the connection may hold an older value (or none). */
export function forgetSetting(connection: DatabaseConnection): void {
  held.delete(connection);
}

const INSTALL = Symbol("trellis.writeSetting");

/** Attached to the app's database by the datastore: where `useWriteSetting` installs. */
export function attachWriteSetting(db: object, install: (setting: WriteSetting | undefined) => void): void {
  Object.defineProperty(db, INSTALL, { value: install, enumerable: false });
}

/**
 * Installs `setting` on the app's database (`ctx.resources.db`): from now on every write through it
 * is preceded by the setting when needed; `undefined` removes it (at `close()`: a dialect may be
 * handed to another app, as the test kit's pool does). One per app; false on a database without the
 * dialect layer.
 */
export function useWriteSetting(db: object, setting: WriteSetting | undefined): boolean {
  const install = (db as Record<symbol, ((setting: WriteSetting | undefined) => void) | undefined>)[INSTALL];
  if (!install) return false;
  install(setting);
  return true;
}

