import { sql, type RawBuilder } from "kysely";
import type { TableModel } from "../schema/model.js";

/**
 * Rows as positional JSON arrays (Postgres): smaller than objects and cheap to read back by index.
 * `json_build_array` takes at most 100 arguments, so longer tuples are built as an array of chunks
 * and flattened again on read; both sides use the same rule, so they always agree.
 */

const MAX_ARGS = 100;

/**
 * The JSON-safe value of every column of `table`, in model order. bigint and numeric would become
 * JSON numbers and lose digits, so they travel as text; every other type has a lossless JSON form
 * (ISO timestamps, `YYYY-MM-DD` dates, `\x` hex bytea, nested jsonb).
 */
export function jsonColumnValues(table: TableModel, qualifier: string): RawBuilder<unknown>[] {
  return Object.entries(table.columns).map(([name, column]) => {
    const ref = sql.id(qualifier, name);
    return column.type === "bigint" || column.type === "decimal" ? sql`cast(${ref} as text)` : sql`${ref}`;
  });
}

export function jsonArray(values: readonly RawBuilder<unknown>[]): RawBuilder<unknown> {
  if (values.length <= MAX_ARGS) return sql`json_build_array(${sql.join(values)})`;
  const chunks: RawBuilder<unknown>[] = [];
  for (let i = 0; i < values.length; i += MAX_ARGS) chunks.push(sql`json_build_array(${sql.join(values.slice(i, i + MAX_ARGS))})`);
  return jsonArray(chunks);
}

/** The flat tuple of a `jsonArray` of `length` values. */
export function readJsonArray(raw: unknown[], length: number): unknown[] {
  if (length <= MAX_ARGS) return raw;
  const chunks = readJsonArray(raw, Math.ceil(length / MAX_ARGS)) as unknown[][];
  return chunks.flat(1);
}
