import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { QueryError } from "./query-error.js";
import type { Ordering } from "./select-sql.js";
import { ValueError, encodeValue } from "./values.js";
import { toInstant } from "./dates.js";

/**
 * Keyset cursors of `findMany({ after })` and `findPage`.
 *
 * A cursor is base64url JSON `[1, table, ordering, values]`: the position of the last row of a page
 * in the page's full ordering (the caller's `orderBy` plus the primary key). It is not signed: it is
 * fully validated instead, and every value is bound as a parameter after the column's own type check
 * (`encodeValue`), so a forged cursor can only name a position the caller could also have asked for
 * with `where`, and never reaches SQL as text. A cursor made for another table or ordering is a 400.
 */

/** Long enough for a few long text keys; a cursor past it was not made here. */
const MAX_CURSOR_CHARS = 16_384;

type Row = Record<string, unknown>;

const signature = (ordering: Ordering) => ordering.map(([column, direction]) => `${column}:${direction}`).join(",");

/**
 * The cursor naming `row`'s position in `ordering`. `tuple` is the row as the database stored it (its
 * column values in model order, find-postgres.ts, find-sqlite.ts). On PostgreSQL a timestamp there
 * keeps the microseconds a Date drops, which a column declared before timestamps had millisecond
 * precision can hold; on SQLite it is the text the column sorts by, which another writer may have
 * stored in another form than Trellis's ISO text (`2024-01-02 03:04:05`, sorting before every ISO
 * value of its day). The cursor then carries that, so the next page starts exactly after the row
 * (not elsewhere in the order: rows lost one way, the same rows again the other).
 */
export function cursorOf(kind: DatabaseKind, table: TableModel, ordering: Ordering, row: Row, tuple?: readonly unknown[]): string {
  const columns = tuple && Object.keys(table.columns);
  const exactOf = kind === "sqlite" ? storedText : microInstant;
  const values = ordering.map(([column]) => {
    const exact = columns && table.columns[column]!.type === "timestamp" ? exactOf(tuple[columns.indexOf(column)]) : undefined;
    return exact ?? portable(table, column, row[column]);
  });
  return Buffer.from(JSON.stringify([1, table.name, signature(ordering), values])).toString("base64url");
}

/** In-process values as JSON: instants as ISO text, days as `YYYY-MM-DD`. */
function portable(table: TableModel, column: string, value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof Date) return table.columns[column]!.type === "date" ? value.toISOString().slice(0, 10) : value.toISOString();
  return value;
}

// PostgreSQL's JSON text of a timestamptz with digits past the milliseconds.
const PG_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(\d{1,3})(?:Z|[+-]\d{2}:\d{2})$/;
// A cursor's form of it: UTC, six digits.
const MICRO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** `2024-01-02T03:04:05.678901Z` for a PostgreSQL timestamp text with microseconds, else undefined. */
function microInstant(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const micros = PG_MICROS.exec(raw);
  if (!micros || /^0*$/.test(micros[1]!)) return undefined;
  // Date keeps the milliseconds (V8 drops further digits) and moves the instant to UTC.
  const instant = toInstant(raw);
  return instant && `${instant.toISOString().slice(0, 23)}${micros[1]!.padEnd(3, "0")}Z`;
}

/** A SQLite timestamp's stored text when it is not the ISO text Trellis writes for its instant, else undefined. */
function storedText(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const instant = toInstant(raw);
  return instant && instant.toISOString() !== raw ? raw : undefined;
}

/** The values of a cursor, checked against the table and ordering it must have been made for. */
export function readCursor(kind: DatabaseKind, table: TableModel, ordering: Ordering, cursor: unknown): unknown[] {
  const bad = (reason: string) => new QueryError("after", reason);
  if (typeof cursor !== "string" || cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw bad("not a cursor (pass the nextCursor of a previous page)");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad("not a cursor (pass the nextCursor of a previous page)");
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== 1 || !Array.isArray(parsed[3])) {
    throw bad("not a cursor (pass the nextCursor of a previous page)");
  }
  if (parsed[1] !== table.name) throw bad(`this cursor was made for another table, not "${table.name}"`);
  if (parsed[2] !== signature(ordering) || parsed[3].length !== ordering.length) {
    throw bad("this cursor was made for another orderBy: page with the orderBy that made it");
  }
  return ordering.map(([column], i) => {
    const value = (parsed as unknown[][])[3]![i];
    const model = table.columns[column]!;
    if (value === null && !model.nullable) throw bad("not a cursor (a null where the column has no nulls)");
    // Bound as text, parsed by PostgreSQL itself: a Date would drop the microseconds.
    if (kind === "postgres" && model.type === "timestamp" && typeof value === "string" && MICRO_INSTANT.test(value) && toInstant(value)) return value;
    // Bound as the text SQLite stored and sorts by (any form of an instant it reads).
    if (kind === "sqlite" && model.type === "timestamp" && typeof value === "string" && toInstant(value)) return value;
    try {
      return encodeValue(kind, model, value);
    } catch (error) {
      if (error instanceof ValueError) throw bad(`not a cursor (${column}: ${error.message})`);
      throw error;
    }
  });
}

/**
 * The rows strictly after the cursor's position, with the ORDER BY's null placement (ascending:
 * nulls last; descending: nulls first, select-sql.ts): for `(a, b, id)` it reads
 * `a > $a or (a = $a and (b > $b or (b = $b and id > $id)))`, `=` being `is null` for a null value.
 */
export function afterCursor(kind: DatabaseKind, table: TableModel, ordering: Ordering, values: readonly unknown[]): RawBuilder<SqlBool> {
  // One direction over columns that hold no NULL (nor SQLite's text decimals): a row-value comparison,
  // `(a, id) > ($a, $id)`, the same rows, in the form a database turns into one range of an index.
  const direction = ordering[0]?.[1];
  const plain = ordering.every(([column, dir]) => dir === direction && !table.columns[column]!.nullable && !(kind === "sqlite" && table.columns[column]!.type === "decimal"));
  if (ordering.length > 1 && plain) {
    const refs = sql.join(ordering.map(([column]) => sql.id(table.name, column)));
    return sql<SqlBool>`(${refs}) ${sql.raw(direction === "asc" ? ">" : "<")} (${sql.join(values.map((value) => sql`${value}`))})`;
  }
  let rest: RawBuilder<SqlBool> | undefined;
  for (let i = ordering.length - 1; i >= 0; i--) {
    const [column, direction] = ordering[i]!;
    const model = table.columns[column]!;
    const numeric = kind === "sqlite" && model.type === "decimal";
    const ref = numeric ? sql`cast(${sql.id(table.name, column)} as real)` : sql`${sql.id(table.name, column)}`;
    const value = values[i];
    const bound = numeric ? sql`cast(${value} as real)` : sql`${value}`;
    let beyond: RawBuilder<SqlBool>;
    let equal: RawBuilder<SqlBool>;
    if (value === null) {
      // Nulls come last ascending (nothing beyond but the tie-breaker) and first descending.
      beyond = direction === "asc" ? sql<SqlBool>`1 = 0` : sql<SqlBool>`${ref} is not null`;
      equal = sql<SqlBool>`${ref} is null`;
    } else {
      const op = sql.raw(direction === "asc" ? ">" : "<");
      beyond = direction === "asc" && model.nullable ? sql<SqlBool>`(${ref} ${op} ${bound} or ${ref} is null)` : sql<SqlBool>`${ref} ${op} ${bound}`;
      equal = sql<SqlBool>`${ref} = ${bound}`;
    }
    rest = rest ? sql<SqlBool>`(${beyond} or (${equal} and ${rest}))` : beyond;
  }
  return rest ?? sql<SqlBool>`1 = 1`;
}
