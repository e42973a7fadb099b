import type { ColumnModels } from "./columns.js";
import type { SearchModel, SearchWeight } from "./model.js";

/**
 * `.search(table, columns, options?)`: a table's full-text index. It lives in the schema, not on the
 * resource, because it is DDL (a generated `tsvector` column and a GIN index on PostgreSQL, an FTS5
 * table and its triggers on SQLite): the version that declares it creates it, a later version that
 * changes or removes it (`.search(table, false)`) rebuilds or drops it.
 */

/** Text search configurations every PostgreSQL (and PGlite) ships with. */
export const SEARCH_LANGUAGES = [
  "simple", "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french", "german", "greek",
  "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali", "norwegian", "portuguese", "romanian",
  "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish",
] as const;

export type SearchLanguage = (typeof SEARCH_LANGUAGES)[number];

export interface SearchOptions {
  /**
   * How words are split and normalised: `simple` lowercases and keeps every word as written (the
   * same on every family); `english` also stems (`posts` finds `post`) and, on PostgreSQL, drops
   * stop words. SQLite knows only these two; PostgreSQL every configuration in `SEARCH_LANGUAGES`.
   * @default "simple"
   */
  language?: SearchLanguage;
}

/** `["title", "body"]` (every column weight A) or `{ title: "A", body: "B" }`. */
export type SearchColumns<Column extends string = string> = readonly Column[] | Readonly<Partial<Record<Column, SearchWeight>>>;

const WEIGHTS = new Set(["A", "B", "C", "D"]);
const TEXT = new Set(["text", "varchar"]);
// Hidden columns of every FTS5 table; refused on every family so a schema means the same everywhere.
const RESERVED = new Set(["rank", "rowid"]);

/** The generated column (PostgreSQL) and the FTS5 table (SQLite): names a searchable table may not use. */
export const SEARCH_COLUMN = "__search";
export const searchTableName = (table: string) => `${table}__search`;

/** The model of a `.search()` call, or the problems of its arguments (shape only: columns are checked against the tables). */
export function searchModel(table: string, columns: unknown, options: SearchOptions = {}): SearchModel | string[] {
  const where = `.search("${table}")`;
  let entries: [string, unknown][];
  if (Array.isArray(columns)) entries = columns.map((column) => [column, "A"]);
  else if (columns !== null && typeof columns === "object") entries = Object.entries(columns);
  else return [`${where} takes an array of columns or { column: weight }`];
  const problems: string[] = [];
  if (entries.length === 0) problems.push(`${where} needs at least one column`);
  for (const [column, weight] of entries) {
    if (typeof column !== "string") problems.push(`${where}: ${JSON.stringify(column)} is not a column name`);
    else if (!WEIGHTS.has(weight as string)) problems.push(`${where}: ${column} has weight ${JSON.stringify(weight)}; use "A", "B", "C" or "D"`);
  }
  if (new Set(entries.map(([column]) => column)).size !== entries.length) problems.push(`${where} names a column twice`);
  const language = options.language ?? "simple";
  if (!(SEARCH_LANGUAGES as readonly string[]).includes(language)) {
    problems.push(`${where}: unknown language ${JSON.stringify(language)}; use one of ${SEARCH_LANGUAGES.join(", ")}`);
  }
  if (problems.length > 0) return problems;
  return { columns: Object.fromEntries(entries) as Record<string, SearchWeight>, language };
}

/** What a full-text index needs of the tables: its table, text columns, and its own names free. */
export function searchProblems(tables: Readonly<Record<string, ColumnModels>>, table: string, search: SearchModel): string[] {
  const columns = tables[table];
  const where = `.search("${table}")`;
  if (!columns) return [`${where}: table "${table}" does not exist (declare it with .table() first)`];
  const problems: string[] = [];
  for (const name of Object.keys(search.columns)) {
    const column = Object.hasOwn(columns, name) ? columns[name] : undefined;
    if (!column) problems.push(`${where}: unknown column "${name}" (use ${Object.keys(columns).join(", ")})`);
    else if (!TEXT.has(column.type)) problems.push(`${where}: ${table}.${name} is a ${column.type} column; only text and varchar columns are searchable`);
    else if (RESERVED.has(name.toLowerCase())) problems.push(`${where}: a column named "${name}" cannot be searchable (SQLite's FTS5 reserves the name)`);
  }
  if (Object.hasOwn(columns, SEARCH_COLUMN)) problems.push(`${where}: a searchable table cannot have a column named "${SEARCH_COLUMN}" (the index uses it)`);
  if (tables[searchTableName(table)]) problems.push(`${where}: a searchable table "${table}" leaves the name "${searchTableName(table)}" to its index`);
  return problems;
}
