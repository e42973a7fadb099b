import type { ColumnModel, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { DdlError, checkExpression, columnType, defaultClause, quoteIdent } from "./ddl-column.js";
import { hnswIndexStatement } from "./vector-sql.js";

/**
 * DDL statements (plain SQL text, one statement per string) for tables and columns of the schema
 * model. Names follow Postgres' own conventions so constraint errors read the same on both families:
 * `{table}_{column}_key` (unique), `{table}_{column}_fkey`, `{table}_{column}_check`,
 * `{table}_{column}_idx`. Unique constraints are unique indexes on both families, because SQLite can
 * neither add nor drop a table constraint after `CREATE TABLE`, and a migration may need to do both.
 */

export { DdlError, quoteIdent } from "./ddl-column.js";

export const uniqueIndexName = (table: string, column: string) => `${table}_${column}_key`;
export const indexName = (table: string, column: string) => `${table}_${column}_idx`;
export const foreignKeyName = (table: string, column: string) => `${table}_${column}_fkey`;
export const checkName = (table: string, column: string) => `${table}_${column}_check`;

/** Whether a column gets a `{table}_{column}_idx` index: `.index()` is moot on unique and key columns. */
export function hasPlainIndex(column: ColumnModel): boolean {
  return column.index && !column.unique && !column.primaryKey && !column.vector;
}

/** Whether a vector column gets its HNSW index, also named `{table}_{column}_idx`. */
export function hasVectorIndex(column: ColumnModel): boolean {
  return column.index && column.vector !== undefined;
}

/** `create table` and indexes for every table, in foreign-key order. */
export function createTablesStatements(kind: DatabaseKind, tables: readonly TableModel[]): string[] {
  const ordered = orderByForeignKeys(tables);
  const position = new Map(ordered.map((table, index) => [table.name, index]));
  const statements: string[] = [];
  const after: string[] = [];
  for (const table of ordered) {
    // Postgres checks that a referenced table exists, so a reference to a table created later
    // in the same step (a cycle) becomes an `alter table` once both exist. SQLite resolves
    // references lazily and keeps them inline (it cannot add a foreign key later anyway).
    const deferred = new Set<string>();
    for (const [name, column] of Object.entries(table.columns)) {
      const target = column.references?.table;
      const later = target !== undefined && (position.get(target) ?? -1) > position.get(table.name)!;
      if (kind === "postgres" && later) deferred.add(name);
    }
    // Its unique indexes right away: Postgres wants one behind every referenced non-key column.
    statements.push(createTableStatement(kind, table, deferred));
    for (const [name, column] of Object.entries(table.columns)) statements.push(...columnIndexStatements(table.name, name, column));
    for (const name of deferred) after.push(addForeignKeyStatement(table, name, table.columns[name]!));
  }
  return [...statements, ...after];
}

function createTableStatement(kind: DatabaseKind, table: TableModel, deferred: ReadonlySet<string>): string {
  const keys = Object.entries(table.columns).filter(([, column]) => column.primaryKey);
  const composite = keys.length > 1;
  const lines = Object.entries(table.columns).map(([name, column]) =>
    columnDefinition(kind, table.name, name, column, { inlineKey: !composite, inlineReference: !deferred.has(name) }),
  );
  if (composite) lines.push(`primary key (${keys.map(([name]) => quoteIdent(name)).join(", ")})`);
  if (lines.length === 0) throw new DdlError(`Table ${table.name} has no columns`);
  return `create table ${quoteIdent(table.name)} (\n  ${lines.join(",\n  ")}\n)`;
}

/** A literal, in any parentheses: the only SQL default SQLite's `alter table ... add column` accepts. */
const SQLITE_CONSTANT = /^[\s(]*([+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?|'([^']|'')*'|x'[0-9a-f]*'|null|true|false)[\s)]*$/i;

/**
 * `alter table add column` plus the column's indexes: the statements for a column added later. On
 * SQLite a default other than a literal (`CURRENT_TIMESTAMP`, a function) is refused: SQLite fails
 * such an `add column` whatever the table holds.
 */
export function addColumnStatements(kind: DatabaseKind, table: string, name: string, column: ColumnModel): string[] {
  const fallback = column.default;
  if (kind === "sqlite" && fallback?.kind === "sql" && !SQLITE_CONSTANT.test(fallback.sql)) {
    throw new DdlError(
      `Cannot add ${table}.${name} to the existing table ${table} on SQLite: its default (${fallback.sql}) is an expression, and SQLite adds a column to a table only with a constant default. ` +
        "Add it .nullable() without a default (or with a literal .default()) and fill it in code; an expression default is possible on a column of a new table.",
    );
  }
  const definition = columnDefinition(kind, table, name, column, { inlineKey: true, inlineReference: true });
  return [`alter table ${quoteIdent(table)} add column ${definition}`, ...columnIndexStatements(table, name, column)];
}

export function columnIndexStatements(table: string, name: string, column: ColumnModel): string[] {
  const hnsw = hasVectorIndex(column) ? [hnswIndexStatement(indexName(table, name), table, name, column.vector!.distance)] : [];
  if (column.unique && !column.primaryKey) return [createIndexStatement(table, name, "unique"), ...hnsw];
  return hasPlainIndex(column) ? [createIndexStatement(table, name, "index")] : hnsw;
}

export function createIndexStatement(table: string, column: string, kind: "unique" | "index"): string {
  const name = kind === "unique" ? uniqueIndexName(table, column) : indexName(table, column);
  const unique = kind === "unique" ? "unique " : "";
  return `create ${unique}index ${quoteIdent(name)} on ${quoteIdent(table)} (${quoteIdent(column)})`;
}

export function dropIndexStatement(name: string): string {
  return `drop index ${quoteIdent(name)}`;
}

interface DefinitionOptions {
  inlineKey: boolean;
  inlineReference: boolean;
}

export function columnDefinition(
  kind: DatabaseKind,
  table: string,
  name: string,
  column: ColumnModel,
  options: DefinitionOptions,
): string {
  const where = `${table}.${name}`;
  let text = `${quoteIdent(name)} ${columnType(kind, column)}`;
  if (column.type === "serial" && kind === "sqlite") {
    // Only a rowid alias autoincrements in SQLite.
    if (!column.primaryKey || !options.inlineKey) throw new DdlError(`${where}: a serial column must be the sole primary key on sqlite`);
    text += " primary key autoincrement";
  } else if (column.primaryKey && options.inlineKey) {
    text += " primary key";
  }
  // Primary keys are spelled NOT NULL too: SQLite lets a non-integer key hold NULL otherwise.
  if (!column.nullable || column.primaryKey) text += " not null";
  text += defaultClause(kind, column, where);
  if (column.references && options.inlineReference) text += ` constraint ${quoteIdent(foreignKeyName(table, name))} ${referencesClause(column)}`;
  const check = checkExpression(kind, name, column);
  if (check) text += ` constraint ${quoteIdent(checkName(table, name))} check (${check})`;
  return text;
}

function referencesClause(column: ColumnModel): string {
  const target = column.references!;
  let text = `references ${quoteIdent(target.table)} (${quoteIdent(target.column)})`;
  if (target.onDelete) text += ` on delete ${target.onDelete}`;
  if (target.onUpdate) text += ` on update ${target.onUpdate}`;
  return text;
}

function addForeignKeyStatement(table: TableModel, name: string, column: ColumnModel): string {
  const constraint = quoteIdent(foreignKeyName(table.name, name));
  return `alter table ${quoteIdent(table.name)} add constraint ${constraint} foreign key (${quoteIdent(name)}) ${referencesClause(column)}`;
}

/**
 * Tables ordered so that a referenced table comes before the tables referencing it (depth first,
 * declaration order breaking ties, so the output is stable). Self-references need no order; in a
 * cycle the table reached first is created first.
 */
export function orderByForeignKeys(tables: readonly TableModel[]): TableModel[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const state = new Map<string, "visiting" | "done">();
  const out: TableModel[] = [];
  const visit = (table: TableModel) => {
    if (state.has(table.name)) return;
    state.set(table.name, "visiting");
    for (const column of Object.values(table.columns)) {
      const target = column.references ? byName.get(column.references.table) : undefined;
      if (target && target !== table) visit(target);
    }
    state.set(table.name, "done");
    out.push(table);
  };
  for (const table of tables) visit(table);
  return out;
}
