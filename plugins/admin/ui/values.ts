import type { Column, Row } from "./api.js";

/** How a cell reads in the table and in a form field. */
export function display(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return `(${value.byteLength} bytes)`;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const NUMERIC = new Set(["serial", "integer", "real"]);

/**
 * A form field's text as the column's value: numbers for numeric columns, booleans, parsed JSON for
 * jsonb, `null` for an empty nullable field; strings otherwise (the server checks and converts).
 */
export function parseField(column: Column, text: string | boolean): unknown {
  if (typeof text === "boolean") return text;
  if (text === "" && column.nullable) return null;
  if (NUMERIC.has(column.type)) return text === "" ? text : Number(text);
  if (column.type === "jsonb" || column.type === "vector") {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${column.name}: not valid JSON`);
    }
  }
  return text;
}

/** A filter value typed for its column. */
export function filterValue(column: Column, text: string): unknown {
  if (NUMERIC.has(column.type)) return Number(text);
  if (column.type === "boolean") return text === "true";
  return text;
}

export function keyOf(table: { primaryKey: string | null }, row: Row): Row | undefined {
  return table.primaryKey ? { [table.primaryKey]: row[table.primaryKey] } : undefined;
}

/** Operators the filter offers for a column type (the API accepts exactly these per type). */
export function operatorsFor(column: Column): string[] {
  if (column.type === "boolean") return ["equals"];
  // A vector filters only on null (the query API's rule); it is searched with "Nearest rows".
  if (column.type === "jsonb" || column.type === "bytes" || column.type === "vector") return [];
  const ordered = ["serial", "integer", "real", "bigint", "decimal", "timestamp", "date"].includes(column.type);
  const text = ["text", "varchar", "uuid"].includes(column.type);
  return ["equals", "not", ...(ordered ? ["gt", "gte", "lt", "lte"] : []), ...(text ? ["contains", "startsWith", "endsWith"] : [])];
}

/** How long ago `at` was, in the largest whole unit ("3 min ago"). */
export function age(at: Date | string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - new Date(at).getTime()) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}
