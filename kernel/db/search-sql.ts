import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { SearchWeight, TableModel } from "../schema/model.js";
import { SEARCH_COLUMN, searchTableName } from "../schema/search.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { QueryError } from "./query-error.js";

/**
 * `findMany({ search })`: the words of the caller's text, matched against the table's full-text
 * index (search-ddl.ts). The text is never a query language on either family: it is cut into words
 * (runs of letters, digits and combining marks) here, and every other character (quotes, operators,
 * NUL) only separates words. Every word must match (AND), in any searchable column.
 *
 * - PostgreSQL and PGlite: `__search @@ plainto_tsquery(language, 'w1 w2')`, ranked by `ts_rank`
 *   (weights D 0.1, C 0.2, B 0.4, A 1.0; the rank of a row depends on that row alone).
 * - SQLite: FTS5 `MATCH '"w1" "w2"'`, every word quoted, ranked by `bm25` with the same weights.
 *
 * The words are bound parameters; the language comes from the schema, never from the caller.
 */

/** Longer text is a 400: no one types more into a search box, and every word costs the index a lookup. */
export const MAX_SEARCH_CHARS = 500;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const BM25_WEIGHTS: Record<SearchWeight, number> = { A: 1, B: 0.4, C: 0.2, D: 0.1 };

/** A search of a plan: the rows it matches, and their rank under any qualifier of the table. */
export interface SearchPlan {
  readonly where: RawBuilder<SqlBool>;
  /** `ORDER BY` term putting the best match first. */
  readonly rank: (qualifier: string) => RawBuilder<unknown>;
}

/** The words of a search text, as both families split them. */
export function searchWords(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** The plan of a `search` argument; undefined when there is none, or no word in it (every row matches). */
export function planSearch(kind: DatabaseKind, table: TableModel, search: unknown): SearchPlan | undefined {
  if (search === undefined || search === null) return undefined;
  if (typeof search !== "string") throw new QueryError("search", "expected a string of words");
  if (!table.search) {
    throw new QueryError("search", `table "${table.name}" has no full-text index (declare one with .search("${table.name}", [...]) in the schema)`);
  }
  if (search.length > MAX_SEARCH_CHARS) throw new QueryError("search", `at most ${MAX_SEARCH_CHARS} characters (got ${search.length})`);
  const words = searchWords(search);
  if (words.length === 0) return undefined;
  return kind === "postgres" ? postgresSearch(table, words) : sqliteSearch(table, words);
}

function postgresSearch(table: TableModel, words: string[]): SearchPlan {
  const query = sql`plainto_tsquery(${table.search!.language}::regconfig, ${words.join(" ")})`;
  return {
    where: sql<SqlBool>`${sql.id(table.name, SEARCH_COLUMN)} @@ ${query}`,
    rank: (qualifier) => sql`ts_rank(${sql.id(qualifier, SEARCH_COLUMN)}, ${query}) desc`,
  };
}

function sqliteSearch(table: TableModel, words: string[]): SearchPlan {
  const fts = sql.id(searchTableName(table.name));
  // Quoted, a word is a string to FTS5, whatever it spells (NEAR, AND, a column name).
  const match = words.map((word) => `"${word.replaceAll('"', '""')}"`).join(" ");
  const weights = sql.join(Object.values(table.search!.columns).map((weight) => sql.lit(BM25_WEIGHTS[weight])));
  return {
    where: sql<SqlBool>`${sql.id(table.name, "rowid")} in (select rowid from ${fts} where ${fts} match ${match})`,
    // bm25 is lower for better matches; it exists only inside a MATCH query, hence the subquery.
    rank: (qualifier) => sql`(select bm25(${fts}, ${weights}) from ${fts} where ${fts} match ${match} and rowid = ${sql.id(qualifier, "rowid")}) asc`,
  };
}

/** An ORDER BY list with the plan's rank first, when its search orders by rank. */
export function rankFirst(plan: { readonly rank?: SearchPlan["rank"] }, qualifier: string, columns: RawBuilder<unknown>): RawBuilder<unknown> {
  return plan.rank ? sql`${plan.rank(qualifier)}, ${columns}` : columns;
}
