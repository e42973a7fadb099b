import type { SchemaModel } from "../schema/model.js";
import { toBase64 } from "./custom-json.js";

/**
 * Values as plain JSON carries them (REST, MCP; DESIGN.md section 5): bytes as base64, bigint as a
 * string, a Date as its ISO string, and a `date` column (`dayKeys`) as its `YYYY-MM-DD` day. The
 * RPC wire keeps the types instead (meta); these are the surfaces without a typed client. `days`
 * names the `date` columns: one set for every object, or a set per row object.
 */
export function toPlainJson(value: unknown, days?: ReadonlySet<string> | WeakMap<object, ReadonlySet<string>>): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, encoded: unknown) {
    if (encoded instanceof Uint8Array) return toBase64(encoded);
    if (typeof encoded === "bigint") return encoded.toString();
    // One set for every object, or (rows of several tables: included relations) each row's own.
    const dayKeys = days instanceof WeakMap ? days.get(this) : days;
    if (dayKeys && typeof encoded === "string" && dayKeys.has(key)) {
      const raw = this[key];
      // The Date at UTC midnight that holds a calendar day in process.
      if (raw instanceof Date) return encoded.slice(0, 10);
    }
    return encoded;
  }) ?? "null";
}

/**
 * The `days` of `toPlainJson` for an answer of `table`'s rows (a row, a list, a page, a batch):
 * each row object with its table's `date` columns, included rows by their relation's table.
 */
export function rowDays(schema: SchemaModel, table: string, value: unknown, out = new WeakMap<object, ReadonlySet<string>>()): WeakMap<object, ReadonlySet<string>> {
  const model = schema.tables[table];
  if (!model) return out;
  if (Array.isArray(value)) {
    for (const item of value) rowDays(schema, table, item, out);
  } else if (value !== null && typeof value === "object" && !(value instanceof Date) && !(value instanceof Uint8Array)) {
    const row = value as Record<string, unknown>;
    // A row holds every column (a page's `items` or a batch's `create` may be a column's name too).
    if (Object.keys(model.columns).every((column) => Object.hasOwn(row, column))) {
      out.set(row, new Set(Object.keys(model.columns).filter((column) => model.columns[column]!.type === "date")));
      for (const [name, relation] of Object.entries(schema.relations[table] ?? {})) {
        if (Object.hasOwn(row, name)) rowDays(schema, relation.target, row[name], out);
      }
    } else for (const item of Object.values(row)) rowDays(schema, table, item, out);
  }
  return out;
}
