import { primaryKeyOf, type SearchModel, type SearchWeight, type TableModel } from "../schema/model.js";
import { SEARCH_COLUMN, searchTableName } from "../schema/search.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { DdlError, quoteIdent } from "./ddl-column.js";

/**
 * The DDL of a table's full-text index (`.search()`), created by the migration of the version that
 * declares it and dropped (then rebuilt) by the one that changes or removes it.
 *
 * - PostgreSQL and PGlite: a generated `tsvector` column `__search`, each column weighted with
 *   `setweight`, and a GIN index on it. The database computes it on every write, existing rows
 *   included when it is added.
 * - SQLite: an FTS5 table `{table}__search` over the table's own rows (external content, keyed by
 *   rowid), kept in step by three triggers and filled from the existing rows when created.
 */

export const searchIndexName = (table: string) => `${table}__search_idx`;
const triggerName = (table: string, op: string) => `${table}__search_${op}`;

/** FTS5 tokenizers for the two languages SQLite has: `porter` stems English as PostgreSQL's `english` does. */
const SQLITE_TOKENIZERS: Record<string, string> = {
  simple: "unicode61 remove_diacritics 0",
  english: "porter unicode61 remove_diacritics 0",
};

/** The index of `table.search` (a table without one has none). */
export function createSearchStatements(kind: DatabaseKind, table: TableModel): string[] {
  if (!table.search) return [];
  return kind === "postgres" ? postgresStatements(table.name, table.search) : sqliteStatements(table.name, table.search, primaryKeyOf(table));
}

export function dropSearchStatements(kind: DatabaseKind, table: string): string[] {
  if (kind === "postgres") return [`alter table ${quoteIdent(table)} drop column if exists ${quoteIdent(SEARCH_COLUMN)}`];
  return [
    ...["insert", "delete", "update"].map((op) => `drop trigger if exists ${quoteIdent(triggerName(table, op))}`),
    `drop table if exists ${quoteIdent(searchTableName(table))}`,
  ];
}

function postgresStatements(table: string, search: SearchModel): string[] {
  // The language is one of SEARCH_LANGUAGES (checked by the schema), so it is safe as a literal.
  const vector = Object.entries(search.columns)
    .map(([column, weight]: [string, SearchWeight]) => `setweight(to_tsvector('${search.language}'::regconfig, coalesce(${quoteIdent(column)}, '')), '${weight}')`)
    .join(" || ");
  return [
    `alter table ${quoteIdent(table)} add column ${quoteIdent(SEARCH_COLUMN)} tsvector generated always as (${vector}) stored`,
    `create index ${quoteIdent(searchIndexName(table))} on ${quoteIdent(table)} using gin (${quoteIdent(SEARCH_COLUMN)})`,
  ];
}

/**
 * An integer primary key is the rowid itself, so updating it moves the row: the update trigger
 * watches the key as well as the searchable columns. Any other table's rowid is fixed for the row's
 * life (but see docs/resources.md on VACUUM).
 */
function sqliteStatements(table: string, search: SearchModel, key: string | undefined): string[] {
  const tokenizer = SQLITE_TOKENIZERS[search.language];
  if (!tokenizer) {
    throw new DdlError(`.search("${table}"): language "${search.language}" is PostgreSQL only; SQLite knows ${Object.keys(SQLITE_TOKENIZERS).join(" and ")}`);
  }
  const fts = quoteIdent(searchTableName(table));
  const names = Object.keys(search.columns).map(quoteIdent);
  const list = names.join(", ");
  const values = (row: "new" | "old") => names.map((name) => `${row}.${name}`).join(", ");
  const remove = `insert into ${fts}(${fts}, rowid, ${list}) values ('delete', old.rowid, ${values("old")});`;
  const add = `insert into ${fts}(rowid, ${list}) values (new.rowid, ${values("new")});`;
  const watched = [...names, ...(key && !(key in search.columns) ? [quoteIdent(key)] : [])].join(", ");
  const on = quoteIdent(table);
  return [
    `create virtual table ${fts} using fts5(${list}, content='${table}', content_rowid='rowid', tokenize='${tokenizer}')`,
    `create trigger ${quoteIdent(triggerName(table, "insert"))} after insert on ${on} begin ${add} end`,
    `create trigger ${quoteIdent(triggerName(table, "delete"))} after delete on ${on} begin ${remove} end`,
    `create trigger ${quoteIdent(triggerName(table, "update"))} after update of ${watched} on ${on} begin ${remove} ${add} end`,
    // Rows that existed before the index: read from the table itself.
    `insert into ${fts}(${fts}) values ('rebuild')`,
  ];
}
