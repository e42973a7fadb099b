import {
  RpcError,
  attributeWrites,
  decodeRow,
  primaryKeyOf,
  rowSelection,
  writeActor,
  type AppDatabase,
  type AppRpcContext,
  type DatabaseKind,
  type ResourceRegistry,
  type ResourceWriteHooks,
} from "../../kernel/index.js";
import type { AdminTable } from "./tables.js";

type Row = Record<string, unknown>;
type After = () => Promise<void>;

/**
 * `_admin.data` writes on a table whose resource declares hooks: the same hooks fire, once per row,
 * the caller flagged as an admin write (`actor.admin`). `before*` run in one transaction with the
 * writes (a refusal rolls every row back); `after*` once it committed. Every admin write carries its
 * actor to the change feed, hooks or not.
 */
export function hookedWrites(db: AppDatabase<any>, kind: DatabaseKind, registry: () => ResourceRegistry | undefined) {
  const hooksOf = (t: AdminTable): ResourceWriteHooks | undefined => registry()?.get(t.model.name)?.hooks;
  const decode = (t: AdminTable, row: Row) => decodeRow(kind, t.model, row) as Row;

  /** Runs `fn` attributed to the admin, in a transaction when hooks run, then the after work once committed. */
  async function run<T>(t: AdminTable, context: AppRpcContext, hooks: ResourceWriteHooks | undefined, before: Map<string, Row>, fn: (executor: AppDatabase<any>, after: After[]) => Promise<T>): Promise<T> {
    const after: After[] = [];
    const actor = writeActor(context, true);
    const result = await attributeWrites({ table: t.model.name, actor, before }, () => (hooks ? db.transact((trx) => fn(trx, after)) : fn(db, after)));
    if (after.length) await db.afterCommit(async () => {
      for (const work of after) await work();
    });
    return result;
  }

  /** The rows a write will touch, locked, read before the hooks see them. */
  async function current(trx: AppDatabase<any>, t: AdminTable, where: Row): Promise<Row[]> {
    let select = trx.selectFrom(t.model.name).select(rowSelection(kind, t.model) as never) as any;
    for (const [column, value] of Object.entries(where)) select = Array.isArray(value) ? select.where(column, "in", value) : select.where(column, "=", value);
    if (kind === "postgres") select = select.forUpdate();
    return ((await select.execute()) as Row[]).map((row) => decode(t, row));
  }

  const keep = (after: After[], work: After | undefined) => void (work && after.push(work));

  return {
    async create(t: AdminTable, context: AppRpcContext, values: Row): Promise<Row> {
      const hooks = hooksOf(t);
      return run(t, context, hooks, new Map(), async (executor, after) => {
        const data = hooks ? await hooks.beforeCreate(executor, context, values) : values;
        const insert = executor.insertInto(t.model.name);
        const found = await (Object.keys(data).length ? insert.values(data) : insert.defaultValues()).returning(rowSelection(kind, t.model) as never).executeTakeFirstOrThrow();
        const row = decode(t, found as Row);
        keep(after, hooks?.after("afterCreate", context, { row }));
        return row;
      });
    },
    async update(t: AdminTable, context: AppRpcContext, where: Row, values: Row): Promise<Row[]> {
      const hooks = hooksOf(t);
      const before = new Map<string, Row>();
      const pk = primaryKeyOf(t.model)!;
      return run(t, context, hooks, before, async (executor, after) => {
        if (!hooks) return (await updateWhere(executor, t, where, values)).map((row) => decode(t, row));
        const rows: Row[] = [];
        for (const old of await current(executor, t, where)) {
          before.set(String(old[pk]), old);
          const data = await hooks.beforeUpdate(executor, context, old, { ...values });
          const [found] = await updateWhere(executor, t, { [pk]: old[pk] }, data);
          if (!found) continue;
          const row = decode(t, found);
          keep(after, hooks.after("afterUpdate", context, { before: old, row }));
          rows.push(row);
        }
        return rows;
      });
    },
    /** Deletes the rows matching `where` (a key list: `{ pk: [..] }`); `expected` rows or none (404 naming the missing). */
    async delete(t: AdminTable, context: AppRpcContext, where: Row): Promise<Row[]> {
      const hooks = hooksOf(t);
      return run(t, context, hooks, new Map(), async (executor, after) => {
        if (hooks) for (const row of await current(executor, t, where)) await hooks.beforeDelete(executor, context, row);
        let statement = executor.deleteFrom(t.model.name) as any;
        for (const [column, value] of Object.entries(where)) statement = Array.isArray(value) ? statement.where(column, "in", value) : statement.where(column, "=", value);
        const rows = ((await statement.returning(rowSelection(kind, t.model)).execute()) as Row[]).map((row) => decode(t, row));
        for (const row of rows) keep(after, hooks?.after("afterDelete", context, { row }));
        return rows;
      });
    },
  };

  function updateWhere(executor: AppDatabase<any>, t: AdminTable, where: Row, values: Row): Promise<Row[]> {
    let statement = executor.updateTable(t.model.name).set(values) as any;
    for (const [column, value] of Object.entries(where)) statement = statement.where(column, "=", value);
    return statement.returning(rowSelection(kind, t.model)).execute();
  }
}
