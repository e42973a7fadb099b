import { sql, type AliasedRawBuilder, type RawBuilder } from "kysely";
import type { ColumnModel, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";

/**
 * SQL fragments of the relational query API: the select list and ORDER BY. Where a driver's own
 * parsing would lose or shift a value, the column is cast to text and decoded in process (decode.ts):
 * - SQLite bigint: better-sqlite3 returns 64-bit integers as lossy JS numbers;
 * - Postgres date: pg parses it as local midnight of the server's time zone, PGlite as UTC.
 */

export type Direction = "asc" | "desc";
export type Ordering = readonly (readonly [column: string, direction: Direction])[];

const ref = (qualifier: string, column: string) => sql.id(qualifier, column);

function needsTextCast(kind: DatabaseKind, column: ColumnModel): boolean {
  return column.type === (kind === "sqlite" ? "bigint" : "date");
}

/** The value expression of a column as the API reads it. */
export function columnValue(kind: DatabaseKind, qualifier: string, name: string, column: ColumnModel): RawBuilder<unknown> {
  const value = ref(qualifier, name);
  return needsTextCast(kind, column) ? sql`cast(${value} as text)` : sql`${value}`;
}

/** `"q"."a", cast("q"."b" as text) as "b", ...` for every column of the table. */
export function selectList(kind: DatabaseKind, table: TableModel, qualifier: string): RawBuilder<unknown> {
  return sql.join(
    Object.entries(table.columns).map(([name, column]) => {
      const value = columnValue(kind, qualifier, name, column);
      return needsTextCast(kind, column) ? sql`${value} as ${sql.id(name)}` : value;
    }),
  );
}

/**
 * ORDER BY for `ordering`, with NULL placement spelled out (Postgres' default: last ascending,
 * first descending) so both families sort alike. SQLite decimals are text and sort as numbers.
 */
export function orderByList(kind: DatabaseKind, table: TableModel, qualifier: string, ordering: Ordering): RawBuilder<unknown> {
  return sql.join(
    ordering.map(([name, direction]) => {
      const column = table.columns[name]!;
      const value = kind === "sqlite" && column.type === "decimal" ? sql`cast(${ref(qualifier, name)} as real)` : ref(qualifier, name);
      return sql`${value} ${sql.raw(direction === "asc" ? "asc nulls last" : "desc nulls first")}`;
    }),
  );
}

/**
 * The columns of `table` as Kysely selections for `.select()` and `.returning()`: plain names,
 * except where the driver would lose or shift the value, which are cast to text under their own
 * name. Decode the rows with `decodeRow` as usual.
 */
export function rowSelection(kind: DatabaseKind, table: TableModel): Array<string | AliasedRawBuilder<unknown, string>> {
  return Object.entries(table.columns).map(([name, column]) =>
    needsTextCast(kind, column) ? sql`cast(${sql.ref(name)} as text)`.as(name) : name,
  );
}
