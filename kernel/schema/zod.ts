import { z } from "zod";
import { MAX_JSON_DEPTH, TOO_DEEP, nestedDeeperThan } from "../db/json-depth.js";
import { inRange } from "../db/dates.js";
import { fromBase64 } from "../wire/custom-json.js";
import type { ColumnModel, TableModel } from "./model.js";
import { vectorInput } from "./vector.js";

/**
 * Zod schemas generated from a table's columns, public for every plugin: resources validate with
 * them, the admin API reuses them, and the same schemas describe inputs to OpenAPI and MCP. The
 * accepted values are the value codec's (db/values.ts): what passes here encodes on every family.
 */

const INTEGER_TEXT = /^-?\d+$/;
const DECIMAL_TEXT = /^-?(\d+(\.\d*)?|\.\d+)$/;

/** The input schema of one column value (never null; nullability is added by the caller). */
export function columnInput(column: ColumnModel): z.ZodType {
  if (column.enum) {
    const values = column.enum.values as [string, ...string[]];
    if (!column.enum.multiple) return z.enum(values);
    // A set is stored comma-separated; accept the array form too.
    return z.union([z.array(z.enum(values)), z.string()]).transform((value, ctx) => {
      const members = Array.isArray(value) ? value : value.split(",").map((part) => part.trim()).filter(Boolean);
      const unknown = members.find((member) => !values.includes(member));
      if (unknown !== undefined) {
        ctx.addIssue({ code: "custom", message: `"${unknown}" is not one of ${values.join(", ")}` });
        return z.NEVER;
      }
      return [...new Set(members)].join(",");
    });
  }
  switch (column.type) {
    case "serial":
    case "integer":
      // 32-bit on Postgres; the same bounds on SQLite so both families accept the same values.
      return z.number().int().min(-2_147_483_648).max(2_147_483_647);
    case "real":
      return z.number();
    case "boolean":
      return z.boolean();
    case "text":
    case "varchar":
      return z.string();
    case "uuid":
      return z.guid();
    case "timestamp":
      return z.union([z.date(), z.iso.datetime({ offset: true })]).transform((value, ctx) => withinYears(new Date(value), ctx));
    case "date":
      return z.union([z.date(), z.iso.date()]).superRefine((value, ctx) => void withinYears(new Date(value), ctx));
    case "bigint":
      return z.union([z.string().regex(INTEGER_TEXT, "must be an integer"), z.number().int(), z.bigint()]).transform(String);
    case "decimal":
      return z.union([z.string().regex(DECIMAL_TEXT, "must be a decimal number"), z.number()]).transform(String);
    case "jsonb":
      // Depth first: zod's JSON check recurses, and a deeply nested body would overflow the stack.
      return z.unknown().refine((value) => !nestedDeeperThan(value, MAX_JSON_DEPTH), { message: TOO_DEEP, abort: true }).pipe(z.json());
    case "bytes":
      return z.union([z.instanceof(Uint8Array), z.base64()]).transform((value) => (typeof value === "string" ? fromBase64(value) : value));
    case "vector":
      return vectorInput(column.vector!.dimensions);
  }
}

/** The Date, or an issue when it is outside years 0001 to 9999 (the value codec stores no other). */
function withinYears(date: Date, ctx: z.RefinementCtx): Date {
  if (!inRange(date)) ctx.addIssue({ code: "custom", message: "must be a date in years 0001 to 9999" });
  return date;
}

function isOptionalOnCreate(column: ColumnModel): boolean {
  return column.type === "serial" || column.nullable || column.default !== undefined;
}

function withNull(column: ColumnModel, schema: z.ZodType): z.ZodType {
  return column.nullable ? schema.nullable() : schema;
}

/** `{ col: value }` for create: required unless serial, defaulted or nullable. Unknown keys are dropped. */
export function createInput(table: TableModel, columns: readonly string[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const name of columns) {
    const column = table.columns[name];
    const schema = withNull(column, columnInput(column));
    shape[name] = isOptionalOnCreate(column) ? schema.optional() : schema;
  }
  return z.object(shape);
}

/** Every settable column optional: the `data` of update. */
export function updateData(table: TableModel, columns: readonly string[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const name of columns) shape[name] = withNull(table.columns[name], columnInput(table.columns[name])).optional();
  return z.object(shape);
}

/** `{ <pk>: value }`, strict: the key names the row. */
export function keyInput(table: TableModel, primaryKey: string): z.ZodObject {
  return z.strictObject({ [primaryKey]: columnInput(table.columns[primaryKey]) });
}
