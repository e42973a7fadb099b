import { sql, type Expression, type RawBuilder, type SqlBool } from "kysely";
import type { ColumnModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";

/** Family-specific pieces of predicates: comparisons that need casts, and literal text matching. */

export type TextOperator = "contains" | "startsWith" | "endsWith";

/**
 * `ref <op> value` (or `ref in (values)`), with values bound as parameters. SQLite keeps decimals as
 * text to stay exact, so there they are compared as numbers (`'10' > '9'` as text is false); this is
 * exact to about 15 significant digits, Postgres' numeric comparison is exact.
 */
export function compare(kind: DatabaseKind, column: ColumnModel, ref: Expression<unknown>, op: string, value: unknown): RawBuilder<SqlBool> {
  const numeric = kind === "sqlite" && column.type === "decimal";
  const left = numeric ? sql`cast(${ref} as real)` : ref;
  const bind = (v: unknown) => (numeric ? sql`cast(${v} as real)` : sql`${v}`);
  if (op === "in") return sql<SqlBool>`${left} in (${sql.join((value as unknown[]).map(bind))})`;
  return sql<SqlBool>`${left} ${sql.raw(op)} ${bind(value)}`;
}

/**
 * The pattern for a text operator with the value's wildcards neutralised: on Postgres `\`, `%` and
 * `_` are backslash-escaped for `LIKE ... ESCAPE '\'`; on SQLite `*`, `?` and `[` are bracketed for
 * GLOB (`[*]` matches a literal star; GLOB has no escape character).
 */
export function likePattern(kind: DatabaseKind, op: TextOperator, value: string): string {
  const literal = kind === "postgres" ? value.replace(/[\\%_]/g, "\\$&") : value.replace(/[*?[]/g, "[$&]");
  const any = kind === "postgres" ? "%" : "*";
  if (op === "startsWith") return `${literal}${any}`;
  if (op === "endsWith") return `${any}${literal}`;
  return `${any}${literal}${any}`;
}

/** Case-sensitive match of a `likePattern`: Postgres LIKE is; SQLite's LIKE is not, GLOB is. */
export function textMatch(kind: DatabaseKind, column: ColumnModel, ref: Expression<unknown>, pattern: string): RawBuilder<SqlBool> {
  if (kind === "sqlite") return sql<SqlBool>`${ref} glob ${pattern}`;
  // Postgres has no LIKE on uuid; match its canonical text form.
  const text = column.type === "uuid" ? sql`cast(${ref} as text)` : ref;
  return sql<SqlBool>`${text} like ${pattern} escape '\\'`;
}
