import type { ColumnModel, ColumnType } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { toDay, toInstant } from "./dates.js";

/**
 * Column-level DDL text: types, defaults and CHECK constraints, per family. Everything emitted here
 * comes from the schema declared in code, never from a request; literals are still quoted properly
 * so a default like `it's` is data, not SQL.
 */

/** A schema that cannot be turned into DDL; thrown while migrations are planned. */
export class DdlError extends Error {
  override readonly name = "DdlError";
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const POSTGRES_TYPES: Record<ColumnType, string> = {
  serial: "serial",
  text: "text",
  varchar: "varchar",
  integer: "integer",
  boolean: "boolean",
  // Milliseconds, what a JS Date holds: a value read back compares equal to the stored one, and a
  // cursor names exactly the row it came from (CURRENT_TIMESTAMP has microseconds otherwise).
  timestamp: "timestamptz(3)",
  bigint: "bigint",
  decimal: "numeric",
  // double precision, not real: a float4 would not round-trip a JS number.
  real: "double precision",
  date: "date",
  jsonb: "jsonb",
  uuid: "uuid",
  bytes: "bytea",
  vector: "vector",
};

// Declared types pick SQLite's storage affinity; see values.ts for the text forms.
const SQLITE_TYPES: Record<ColumnType, string> = {
  serial: "integer",
  text: "text",
  varchar: "text",
  integer: "integer",
  boolean: "integer",
  timestamp: "text",
  bigint: "integer",
  decimal: "text",
  real: "real",
  date: "text",
  jsonb: "text",
  uuid: "text",
  bytes: "blob",
  // Never emitted: a vector column on SQLite is refused at build (vector-sql.ts).
  vector: "blob",
};

export function columnType(kind: DatabaseKind, column: ColumnModel): string {
  if (column.vector && kind === "postgres") return `vector(${column.vector.dimensions})`;
  return (kind === "postgres" ? POSTGRES_TYPES : SQLITE_TYPES)[column.type];
}

const CURRENT_TIMESTAMP = /^\s*\(?\s*current_timestamp\s*\)?\s*$/i;
// SQLite's CURRENT_TIMESTAMP is `YYYY-MM-DD HH:MM:SS`; the ISO form keeps text order equal to time
// order next to values written by Trellis, and keeps milliseconds.
const SQLITE_NOW_ISO = "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))";

/** The `default ...` clause of a column, or "" when it has none. `where` names the column in errors. */
export function defaultClause(kind: DatabaseKind, column: ColumnModel, where: string): string {
  const fallback = column.default;
  if (!fallback) return "";
  if (fallback.kind === "sql") {
    if (kind === "postgres") return ` default ${fallback.sql}`;
    if (column.type === "timestamp" && CURRENT_TIMESTAMP.test(fallback.sql)) return ` default ${SQLITE_NOW_ISO}`;
    // SQLite accepts an expression default only in parentheses.
    return ` default (${fallback.sql})`;
  }
  return ` default ${literalDefault(kind, column.type, fallback.value, where)}`;
}

function literalDefault(kind: DatabaseKind, type: ColumnType, value: string | number | boolean, where: string): string {
  const refuse = (expected: string) =>
    new DdlError(`Cannot use ${JSON.stringify(value)} as the default of ${where} (${type}): expected ${expected}`);
  switch (type) {
    case "serial":
    case "integer":
    case "real":
      if (typeof value !== "number" || !Number.isFinite(value)) throw refuse("a number");
      if (type !== "real" && !Number.isInteger(value)) throw refuse("an integer");
      return String(value);
    case "bigint":
      if (!/^-?\d+$/.test(String(value))) throw refuse("an integer string");
      return String(value);
    case "decimal":
      if (!/^-?(\d+(\.\d*)?|\.\d+)$/.test(String(value))) throw refuse("a decimal string");
      return quoteLiteral(String(value));
    case "boolean":
      if (typeof value !== "boolean") throw refuse("a boolean");
      return kind === "postgres" ? String(value) : value ? "1" : "0";
    case "text":
    case "varchar":
    case "uuid":
      return quoteLiteral(String(value));
    case "date": {
      const day = toDay(value);
      if (day === undefined) throw refuse("a YYYY-MM-DD string");
      return quoteLiteral(day);
    }
    case "timestamp": {
      const instant = toInstant(value);
      if (!instant) throw refuse("an ISO-8601 string");
      return quoteLiteral(instant.toISOString());
    }
    case "jsonb": {
      // A string default is the JSON text itself (`'{}'`), as it would be written in SQL.
      const text = typeof value === "string" ? value : JSON.stringify(value);
      try {
        JSON.parse(text);
      } catch {
        throw refuse("JSON text");
      }
      return quoteLiteral(text);
    }
    case "bytes":
    case "vector":
      throw refuse(`nothing: ${type} columns take .defaultSql()`);
  }
}

/**
 * The CHECK expression of a column, or undefined. Enums on both families; on SQLite also booleans
 * (0/1) and JSON validity, which Postgres' own types already guarantee.
 */
export function checkExpression(kind: DatabaseKind, name: string, column: ColumnModel): string | undefined {
  const ref = quoteIdent(name);
  if (column.enum) {
    const members = column.enum.values.map(quoteLiteral);
    if (!column.enum.multiple) return `${ref} in (${members.join(", ")})`;
    // A comma-separated set: wrap every member as `,m,` (doubling the separators) and delete each
    // allowed member; only a set made of allowed members leaves nothing. Works unchanged on both
    // families, so both accept and refuse exactly the same values; '' is the empty set.
    let rest = `',' || replace(${ref}, ',', ',,') || ','`;
    for (const member of column.enum.values) rest = `replace(${rest}, ${quoteLiteral(`,${member},`)}, '')`;
    return `${ref} = '' or ${rest} = ''`;
  }
  if (kind === "sqlite" && column.type === "boolean") return `${ref} in (0, 1)`;
  if (kind === "sqlite" && column.type === "jsonb") return `json_valid(${ref})`;
  return undefined;
}
