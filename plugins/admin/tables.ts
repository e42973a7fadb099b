import { z } from "zod";
import { RpcError, createInput, encodeValue, primaryKeyOf, updateData, type DatabaseKind, type SchemaModel, type TableModel } from "../../kernel/index.js";
import { READ_ONLY_TABLES, secretColumns } from "./secrets.js";

type Row = Record<string, unknown>;

/**
 * One table as the admin API handles it: the model, and the zod schemas of its writes (built once
 * from the kernel's column-to-zod helpers, so values are checked exactly as resources check them).
 */
export interface AdminTable {
  model: TableModel;
  /** Columns an admin may set: every column but serial ones (the database numbers those). */
  settable: readonly string[];
  readonly create: z.ZodObject;
  readonly update: z.ZodObject;
  writable: boolean;
  /** Why writes are refused (403), when `writable` is false. */
  readOnly?: string;
}

export function adminTables(schema: SchemaModel): Map<string, AdminTable> {
  const out = new Map<string, AdminTable>();
  const files = new Set(schema.files ? ["file", ...schema.files.attachTo.map((table) => `${table}_file`)] : []);
  for (const model of Object.values(schema.tables)) {
    const settable = Object.keys(model.columns).filter((column) => model.columns[column]!.type !== "serial");
    const readOnly = READ_ONLY_TABLES.has(model.name)
      ? `"${model.name}" holds credentials and is read-only in the admin API; use the auth endpoints`
      : files.has(model.name)
        ? `"${model.name}" belongs to the files plugin and is read-only in _admin.data (a row removed here would leave its bytes in storage); use _admin.files.* or the Files view`
        : undefined;
    // The write schemas are made on an admin's first write to the table: most apps, and every test,
    // build the admin API for every table and write to few of them, if any.
    let create: z.ZodObject | undefined;
    let update: z.ZodObject | undefined;
    out.set(model.name, {
      model,
      settable,
      get create() {
        return (create ??= createInput(model, settable));
      },
      get update() {
        return (update ??= updateData(model, settable));
      },
      writable: readOnly === undefined,
      ...(readOnly ? { readOnly } : {}),
    });
  }
  return out;
}

/** The table named `name`, or 400 naming the tables there are. */
export function tableOf(tables: ReadonlyMap<string, AdminTable>, name: string): AdminTable {
  const table = tables.get(name);
  if (!table) throw new RpcError("BAD_REQUEST", { message: `unknown table "${name}" (tables: ${[...tables.keys()].join(", ") || "none"})` });
  return table;
}

/**
 * 403 for tables whose rows belong to the auth library (sessions, accounts, verifications, API keys)
 * or to the files plugin (`file` and its attach pivots, whose rows own bytes in the store).
 */
export function assertWritable(table: AdminTable): void {
  if (!table.writable) throw new RpcError("FORBIDDEN", { message: table.readOnly! });
}

/**
 * A write's `where`: a non-empty `{ column: value }` of plain equalities on known, non-secret
 * columns, each value encoded for the family. Operators, nulls and empty objects are 400, so a
 * write can never reach every row by accident.
 */
export function equalityWhere(kind: DatabaseKind, table: AdminTable, where: Row): Row {
  const entries = Object.entries(where).filter(([, value]) => value !== undefined);
  if (entries.length === 0) throw new RpcError("BAD_REQUEST", { message: "where: name at least one column, e.g. { id: 1 }" });
  const secrets = secretColumns(table.model.name);
  const out: Row = {};
  for (const [column, value] of entries) {
    const model = Object.hasOwn(table.model.columns, column) ? table.model.columns[column] : undefined;
    if (!model) throw new RpcError("BAD_REQUEST", { message: `where.${column}: unknown column "${column}" on table "${table.model.name}"` });
    if (secrets.includes(column)) throw new RpcError("BAD_REQUEST", { message: `where.${column}: "${column}" is a secret column and cannot be filtered on` });
    if (value === null || (typeof value === "object" && !(value instanceof Date))) {
      throw new RpcError("BAD_REQUEST", { message: `where.${column}: expected a plain value (writes match by equality only)` });
    }
    out[column] = encoded(kind, table, column, value, `where.${column}`);
  }
  return out;
}

/**
 * A bulk write's `keys`: primary-key values, each encoded for the family, repeats dropped. A table
 * without a primary key is 400: its rows have nothing to be named by.
 */
export function keyValues(kind: DatabaseKind, table: AdminTable, keys: readonly unknown[]): { column: string; values: unknown[] } {
  const column = primaryKeyOf(table.model);
  if (!column) throw new RpcError("BAD_REQUEST", { message: `"${table.model.name}" has no primary key, so its rows cannot be named by key` });
  const values = new Map<string, unknown>();
  for (const [i, key] of keys.entries()) {
    const value = encoded(kind, table, column, key, `keys[${i}]`);
    values.set(String(value), value);
  }
  return { column, values: [...values.values()] };
}

/** Create or update `data`: unknown and serial columns are 400, values checked by the column's schema, then encoded. */
export function writeData(kind: DatabaseKind, table: AdminTable, data: Row, mode: "create" | "update"): Row {
  for (const column of Object.keys(data)) {
    if (!Object.hasOwn(table.model.columns, column)) throw new RpcError("BAD_REQUEST", { message: `data.${column}: unknown column "${column}" on table "${table.model.name}"` });
    if (!table.settable.includes(column)) throw new RpcError("BAD_REQUEST", { message: `data.${column}: "${column}" is numbered by the database and cannot be set` });
  }
  const parsed = (mode === "create" ? table.create : table.update).safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RpcError("BAD_REQUEST", { message: `Invalid input: data.${issue.path.join(".")}: ${issue.message}` });
  }
  const out: Row = {};
  for (const [column, value] of Object.entries(parsed.data)) if (value !== undefined) out[column] = encoded(kind, table, column, value, `data.${column}`);
  if (mode === "update" && Object.keys(out).length === 0) throw new RpcError("BAD_REQUEST", { message: "Nothing to update: data names no column" });
  return out;
}

function encoded(kind: DatabaseKind, table: AdminTable, column: string, value: unknown, path: string): unknown {
  try {
    return encodeValue(kind, table.model.columns[column]!, value);
  } catch (error) {
    throw new RpcError("BAD_REQUEST", { message: `${path}: ${(error as Error).message}` });
  }
}
