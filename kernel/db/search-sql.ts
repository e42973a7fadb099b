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
 *   (weights D 0.1, C 0.2, B 0.4, A 1.0). PostgreSQL's parser indexes a decimal, a version, a host,
 *   an e-mail address or a path as one token (`1.5`, `example.com`), never as the words `1` and
 *   `5`; so when punctuation joins words in the text, the text as that parser reads it is matched
 *   too (`|`): `plainto_tsquery` reads plain text, so it is no query language either.
 * - SQLite: FTS5 `MATCH '"w1" "w2"'`, every word quoted, ranked by the weighted count of matches
 *   per column (same weights), read from `highlight()`.
 *
 * Both ranks depend on the row alone. FTS5's own `bm25` is not used because it weighs words by how
 * rare they are across the whole table: rows a caller cannot see (another owner's, a rule's hidden
 * ones) would shift the order of the rows they can, an oracle for words those rows hold.
 *
 * The words are bound parameters; the language comes from the schema, never from the caller.
 */

/** Longer text is a 400: no one types more into a search box, and every word costs the index a lookup. */
export const MAX_SEARCH_CHARS = 500;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** Two words joined by punctuation (`1.5`, `a@b`), which PostgreSQL's parser may read as one token. */
const JOINED = /[\p{L}\p{N}\p{M}][^\p{L}\p{N}\p{M}\s]+[\p{L}\p{N}\p{M}]/u;
/** PostgreSQL's default `ts_rank` weights, used by the SQLite rank too. */
const WEIGHTS: Record<SearchWeight, number> = { A: 1, B: 0.4, C: 0.2, D: 0.1 };

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
  return kind === "postgres" ? postgresSearch(table, words, search) : sqliteSearch(table, words);
}

function postgresSearch(table: TableModel, words: string[], text: string): SearchPlan {
  const language = table.search!.language;
  const byWords = sql`plainto_tsquery(${language}::regconfig, ${words.join(" ")})`;
  // NUL cannot be bound as text; like any other character outside a word it only separates.
  const query = JOINED.test(text) ? sql`(${byWords} || plainto_tsquery(${language}::regconfig, ${text.replaceAll("\u0000", " ")}))` : byWords;
  return {
    where: sql<SqlBool>`${sql.id(table.name, SEARCH_COLUMN)} @@ ${query}`,
    rank: (qualifier) => sql`ts_rank(${sql.id(qualifier, SEARCH_COLUMN)}, ${query}) desc`,
  };
}

function sqliteSearch(table: TableModel, words: string[]): SearchPlan {
  const fts = sql.id(searchTableName(table.name));
  // Quoted, a word is a string to FTS5, whatever it spells (NEAR, AND, a column name).
  const match = words.map((word) => `"${word.replaceAll('"', '""')}"`).join(" ");
  const columns = Object.entries(table.search!.columns);
  return {
    where: sql<SqlBool>`${sql.id(table.name, "rowid")} in (select rowid from ${fts} where ${fts} match ${match})`,
    rank: (qualifier) => {
      // highlight() marks each match in a column with char(1); the marks a column held already are not matches.
      const marks = (text: RawBuilder<unknown>) => sql`(length(coalesce(${text}, '')) - length(replace(coalesce(${text}, ''), char(1), '')))`;
      const score = sql.join(
        columns.map(([column, weight], i) => sql`${sql.lit(WEIGHTS[weight])} * (${marks(sql.id(`h${i}`))} - ${marks(sql.id(qualifier, column))})`),
        sql` + `,
      );
      const highlights = sql.join(columns.map((_, i) => sql`highlight(${fts}, ${sql.lit(i)}, char(1), '') as ${sql.id(`h${i}`)}`));
      return sql`(select ${score} from (select ${highlights} from ${fts} where ${fts} match ${match} and rowid = ${sql.id(qualifier, "rowid")})) desc`;
    },
  };
}

/** An ORDER BY list with the plan's rank first, when its search orders by rank. */
export function rankFirst(plan: { readonly rank?: SearchPlan["rank"] }, qualifier: string, columns: RawBuilder<unknown>): RawBuilder<unknown> {
  return plan.rank ? sql`${plan.rank(qualifier)}, ${columns}` : columns;
}
