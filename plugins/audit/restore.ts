import type { Kysely } from "kysely";
import { RpcError, decodeRow, encodeValue, primaryKeyOf, type ColumnModel, type DatabaseKind, type SchemaModel } from "../../kernel/index.js";
import type { AuditEntry } from "./entries.js";

const REDACTED = "[redacted]";

/**
 * Puts a row back as an entry recorded it: the row after an insert or an update, the row before a
 * delete (which undoes it). The row is updated when it exists and inserted again when it does not;
 * secret columns are left as they are (the log never held them). The write goes through the app's
 * database like any other, so it is itself audited, as the administrator who asked.
 */
export async function restoreEntry(db: Kysely<any>, kind: DatabaseKind, schema: SchemaModel, entry: AuditEntry): Promise<Record<string, unknown>> {
  const table = schema.tables[entry.table];
  const key = table && primaryKeyOf(table);
  if (!table || !key || entry.key === null) {
    throw new RpcError("BAD_REQUEST", { message: `Entry ${entry.id} is on "${entry.table}", which has no primary key in the current schema: it cannot be restored` });
  }
  const version = entry.op === "delete" ? entry.before : entry.after;
  if (!version) throw new RpcError("BAD_REQUEST", { message: `Entry ${entry.id} holds no row to restore` });
  const values: Record<string, unknown> = {};
  for (const [name, column] of Object.entries(table.columns)) {
    if (!Object.hasOwn(version, name) || column.secret || version[name] === REDACTED) continue;
    values[name] = encodeValue(kind, column, fromLog(column, version[name]));
  }
  const keyValue = values[key];
  delete values[key];
  const row = await db.transaction().execute(async (trx) => {
    const found = await trx.selectFrom(entry.table).select(key).where(key, "=", keyValue).executeTakeFirst();
    if (found) return trx.updateTable(entry.table).set(values).where(key, "=", keyValue).returningAll().executeTakeFirstOrThrow();
    return trx.insertInto(entry.table).values({ ...values, [key]: keyValue }).returningAll().executeTakeFirstOrThrow();
  });
  return decodeRow(kind, table, row as Record<string, unknown>);
}

/** A logged JSON value back in its in-process shape (the log holds what `to_jsonb` or SQLite's JSON wrote). */
function fromLog(column: ColumnModel, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case "timestamp":
      return new Date(String(value));
    case "date":
      return new Date(`${String(value).slice(0, 10)}T00:00:00.000Z`);
    case "boolean":
      return typeof value === "number" ? value !== 0 : value;
    case "bigint":
    case "decimal":
      return String(value);
    case "bytes": {
      const hex = String(value).replace(/^\\x/, "");
      return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
    }
    default:
      return value;
  }
}
