import { z } from "zod";
import { RpcError, decodeRow, rowSelection, type AppDatabase, type DatabaseKind, type ProcedureBase, type AppRpcContext } from "../../kernel/index.js";
import type { AdminSettings } from "./options.js";
import { redact, refuseSecretFilter, refuseSecretOrder } from "./secrets.js";
import type { CountCache } from "./count-cache.js";
import { assertWritable, equalityWhere, keyValues, tableOf, writeData, type AdminTable } from "./tables.js";

export type AdminRow = Record<string, unknown>;

/** zod drops an own `__proto__` key from a record, silently widening a filter: refuse it instead. */
const record = z.preprocess((value, ctx) => {
  if (typeof value === "object" && value !== null && Object.hasOwn(value, "__proto__")) ctx.addIssue({ code: "custom", message: 'unknown column "__proto__"' });
  return value;
}, z.record(z.string(), z.unknown()));

const table = z.string().min(1);
/** What a list selects: `list` pages through it, the export route writes all of it. */
export const selectionInput = z.object({
  table,
  where: record.optional(),
  orderBy: z.array(z.record(z.string(), z.enum(["asc", "desc"]))).optional(),
});
const listInput = selectionInput.extend({
  take: z.number().int().min(0).optional(),
  skip: z.number().int().min(0).optional(),
});
const whereInput = z.object({ table, where: record });

/**
 * `_admin.data.*`: reads and writes on any table of the latest schema. Tables, columns and
 * operators are checked against the schema (400, never SQL); secrets are redacted in every row and
 * refused in filters and orderings; credential tables are read-only.
 */
export function dataProcedures(base: ProcedureBase<AppRpcContext>, db: AppDatabase<any>, kind: DatabaseKind, tables: ReadonlyMap<string, AdminTable>, settings: AdminSettings, counts: CountCache) {
  const { limits } = settings;
  const query = (name: string) => (db.query as Record<string, any>)[name];
  const out = (t: AdminTable, row: AdminRow) => redact(t.model.name, decodeRow(kind, t.model, row) as AdminRow);

  const list = base.input(listInput).handler(async ({ input }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    const take = input.take ?? limits.default;
    if (take > limits.max) throw new RpcError("BAD_REQUEST", { message: `take must be at most ${limits.max}` });
    if ((input.skip ?? 0) > limits.maxSkip) throw new RpcError("BAD_REQUEST", { message: `skip must be at most ${limits.maxSkip}` });
    refuseSecretFilter(t.model.name, input.where);
    refuseSecretOrder(t.model.name, input.orderBy);
    const skip = input.skip ?? 0;
    const rows = (await query(t.model.name).findMany({ where: input.where, orderBy: input.orderBy, take, skip })) as AdminRow[];
    // A page that is not full ends the result: its rows give the count without counting.
    const count = rows.length < take && (rows.length > 0 || skip === 0)
      ? skip + rows.length
      : await counts.count(t.model.name, input.where, () => query(t.model.name).count({ where: input.where }));
    return { data: rows.map((row) => redact(t.model.name, row)), count };
  });

  const get = base.input(whereInput).handler(async ({ input }): Promise<AdminRow> => {
    const t = tableOf(tables, input.table);
    const where = equalityWhere(kind, t, input.where);
    let select = db.selectFrom(t.model.name).select(rowSelection(kind, t.model) as never);
    for (const [column, value] of Object.entries(where)) select = select.where(column as never, "=", value as never);
    const row = await select.executeTakeFirst();
    if (!row) throw notFound(t);
    return out(t, row as AdminRow);
  });

  const create = base.input(z.object({ table, data: record })).handler(async ({ input }): Promise<AdminRow> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const values = writeData(kind, t, input.data, "create");
    const insert = db.insertInto(t.model.name);
    const row = await (Object.keys(values).length ? insert.values(values) : insert.defaultValues())
      .returning(rowSelection(kind, t.model) as never)
      .executeTakeFirstOrThrow();
    return out(t, row as AdminRow);
  });

  const update = base.input(z.object({ table, where: record, data: record })).handler(async ({ input }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const where = equalityWhere(kind, t, input.where);
    const values = writeData(kind, t, input.data, "update");
    let statement = db.updateTable(t.model.name).set(values);
    for (const [column, value] of Object.entries(where)) statement = statement.where(column as never, "=", value as never);
    const rows = (await statement.returning(rowSelection(kind, t.model) as never).execute()) as AdminRow[];
    if (rows.length === 0) throw notFound(t);
    return { data: rows.map((row) => out(t, row)), count: rows.length };
  });

  const remove = base.input(whereInput).handler(async ({ input }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const where = equalityWhere(kind, t, input.where);
    let statement = db.deleteFrom(t.model.name);
    for (const [column, value] of Object.entries(where)) statement = statement.where(column as never, "=", value as never);
    const rows = (await statement.returning(rowSelection(kind, t.model) as never).execute()) as AdminRow[];
    if (rows.length === 0) throw notFound(t);
    return { data: rows.map((row) => out(t, row)), count: rows.length };
  });

  // Bounded by the largest page: the dashboard deletes what it selected on one page.
  const deleteMany = base.input(z.object({ table, keys: z.array(z.union([z.string(), z.number()])).min(1).max(limits.max) })).handler(async ({ input }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const { column, values } = keyValues(kind, t, input.keys);
    // All or nothing: a key that matches no row, or a row another one still references, deletes none.
    const rows = await db.transact(async (trx) => {
      const deleted = (await trx.deleteFrom(t.model.name).where(column as never, "in", values as never).returning(rowSelection(kind, t.model) as never).execute()) as AdminRow[];
      if (deleted.length < values.length) {
        const found = new Set(deleted.map((row) => String(row[column])));
        const missing = values.filter((value) => !found.has(String(value)));
        throw new RpcError("NOT_FOUND", { message: `No ${t.model.name} row with ${column} ${missing.map(String).join(", ")}; nothing was deleted` });
      }
      return deleted;
    });
    return { data: rows.map((row) => out(t, row)), count: rows.length };
  });

  return { list, get, create, update, delete: remove, deleteMany };
}

function notFound(t: AdminTable) {
  return new RpcError("NOT_FOUND", { message: `No ${t.model.name} row matches` });
}
