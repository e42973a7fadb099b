import { z } from "zod";
import { MAX_SEARCH_CHARS, RpcError, decodeRow, rowSelection, type AppDatabase, type DatabaseKind, type ProcedureBase, type AppRpcContext, type ResourceRegistry } from "../../kernel/index.js";
import { hookedWrites } from "./hooked-writes.js";
import type { AdminSettings } from "./options.js";
import { redact, refuseRelationFilter, refuseSecretFilter, refuseSecretNearest, refuseSecretOrder, refuseSecretSearch } from "./secrets.js";
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
  /** Words to find in the table's full-text index (the query API's `search`). */
  search: z.string().max(MAX_SEARCH_CHARS, `search must be at most ${MAX_SEARCH_CHARS} characters`).optional(),
});
// The shape only: the column, the vector's length and k's bound are checked against the table.
const nearest = z.strictObject({ column: z.string(), vector: z.array(z.number()).max(16_000), k: z.number().int().min(1) });
const listInput = selectionInput.extend({
  take: z.number().int().min(0).optional(),
  skip: z.number().int().min(0).optional(),
  /** Keyset paging: answer `nextCursor` (implied by `after`). */
  page: z.boolean().optional(),
  /** The `nextCursor` of a previous page (the query API's cursor, checked by the kernel). */
  after: z.string().max(16_384).optional(),
  /** The k rows whose vector `column` is nearest `vector`, nearest first, each with `_distance`. */
  nearest: nearest.optional(),
});

/** A page of `_admin.data.list`: `nextCursor` only when keyset paging was asked for (`page` or `after`). */
export interface AdminList {
  data: AdminRow[];
  count: number;
  nextCursor?: string | null;
}

/** A count's key in the cache: the `where` alone, or `[where, search]` (a `where` is never an array). */
const countKey = (where: unknown, search: string | undefined) => (search === undefined ? where : [where ?? {}, search]);
const whereInput = z.object({ table, where: record });

/**
 * `_admin.data.*`: reads and writes on any table of the latest schema. Tables, columns and
 * operators are checked against the schema (400, never SQL); secrets are redacted in every row and
 * refused in filters and orderings; credential tables are read-only.
 */
export function dataProcedures(base: ProcedureBase<AppRpcContext>, db: AppDatabase<any>, kind: DatabaseKind, tables: ReadonlyMap<string, AdminTable>, settings: AdminSettings, counts: CountCache, registry: () => ResourceRegistry | undefined) {
  const { limits } = settings;
  // Writes go through the table's resource hooks, when it declares any (docs/resources.md, "Hooks").
  const writes = hookedWrites(db, kind, registry);
  const query = (name: string) => (db.query as Record<string, any>)[name];
  const out = (t: AdminTable, row: AdminRow) => redact(t.model.name, decodeRow(kind, t.model, row) as AdminRow);

  const list = base.input(listInput).handler(async ({ input }): Promise<AdminList> => {
    const t = tableOf(tables, input.table);
    const name = t.model.name;
    refuseSecretFilter(name, input.where);
    refuseRelationFilter(t.model, input.where);
    refuseSecretOrder(name, input.orderBy);
    refuseSecretSearch(t.model, input.search);
    const { where, orderBy, search } = input;
    if (input.nearest) {
      // k rows nearest a vector: its own order and length, so no pages (the kernel refuses orderBy, take, skip, after).
      refuseSecretNearest(name, input.nearest.column);
      if (input.nearest.k > limits.max) throw new RpcError("BAD_REQUEST", { message: `nearest.k must be at most ${limits.max}` });
      if (input.page) throw new RpcError("BAD_REQUEST", { message: "page: a nearest search answers its k rows at once and has no pages" });
      const rows = (await query(name).findMany({ where, search, nearest: input.nearest, orderBy, take: input.take, skip: input.skip, after: input.after })) as AdminRow[];
      return { data: rows.map((row) => redact(name, row)), count: rows.length };
    }
    const take = input.take ?? limits.default;
    if (take > limits.max) throw new RpcError("BAD_REQUEST", { message: `take must be at most ${limits.max}` });
    if ((input.skip ?? 0) > limits.maxSkip) throw new RpcError("BAD_REQUEST", { message: `skip must be at most ${limits.maxSkip}` });
    const skip = input.skip ?? 0;
    const paged = input.page === true || input.after !== undefined;
    const args = { where, orderBy, take, skip, search, after: input.after };
    let rows: AdminRow[];
    let nextCursor: string | null | undefined;
    if (paged) ({ items: rows, nextCursor } = (await query(name).findPage(args)) as { items: AdminRow[]; nextCursor: string | null });
    else rows = (await query(name).findMany(args)) as AdminRow[];
    // A first page that is not full ends the result: its rows give the count without counting.
    const count = input.after === undefined && rows.length < take && (rows.length > 0 || skip === 0)
      ? skip + rows.length
      : await counts.count(name, countKey(where, search), () => query(name).count({ where, search }));
    const data = rows.map((row) => redact(name, row));
    return paged ? { data, count, nextCursor: nextCursor ?? null } : { data, count };
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

  const create = base.input(z.object({ table, data: record })).handler(async ({ input, context }): Promise<AdminRow> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const values = writeData(kind, t, input.data, "create");
    return redact(t.model.name, await writes.create(t, context, values));
  });

  const update = base.input(z.object({ table, where: record, data: record })).handler(async ({ input, context }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const where = equalityWhere(kind, t, input.where);
    const values = writeData(kind, t, input.data, "update");
    const rows = await writes.update(t, context, where, values);
    if (rows.length === 0) throw notFound(t);
    return { data: rows.map((row) => redact(t.model.name, row)), count: rows.length };
  });

  const remove = base.input(whereInput).handler(async ({ input, context }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const where = equalityWhere(kind, t, input.where);
    const rows = await writes.delete(t, context, where);
    if (rows.length === 0) throw notFound(t);
    return { data: rows.map((row) => redact(t.model.name, row)), count: rows.length };
  });

  // Bounded by the largest page: the dashboard deletes what it selected on one page.
  const deleteMany = base.input(z.object({ table, keys: z.array(z.union([z.string(), z.number()])).min(1).max(limits.max) })).handler(async ({ input, context }): Promise<{ data: AdminRow[]; count: number }> => {
    const t = tableOf(tables, input.table);
    assertWritable(t);
    const { column, values } = keyValues(kind, t, input.keys);
    // All or nothing: a key that matches no row, or a row another one still references, deletes none.
    const rows = await db.transact(async () => {
      const deleted = await writes.delete(t, context, { [column]: values });
      if (deleted.length < values.length) {
        const found = new Set(deleted.map((row) => String(row[column])));
        const missing = values.filter((value) => !found.has(String(value)));
        throw new RpcError("NOT_FOUND", { message: `No ${t.model.name} row with ${column} ${missing.map(String).join(", ")}; nothing was deleted` });
      }
      return deleted;
    });
    return { data: rows.map((row) => redact(t.model.name, row)), count: rows.length };
  });

  return { list, get, create, update, delete: remove, deleteMany };
}

function notFound(t: AdminTable) {
  return new RpcError("NOT_FOUND", { message: `No ${t.model.name} row matches` });
}
