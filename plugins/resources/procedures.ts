import {
  RpcError,
  compileRowEncoder,
  createInput,
  decodeRow,
  encodeValue,
  keyInput,
  rowSelection,
  updateData,
  type AppDatabase,
  type AppRpcContext,
  type DatabaseKind,
  type ProcedureBase,
  type SealedApp,
  type TableModel,
  attributeWrites,
  transactOnDemand,
  writeActor,
} from "../../kernel/index.js";
import { afterCommit, type AfterWork, type BoundHooks, type HookCaller } from "./hooks.js";
import { assertFunction, assertGate } from "./permissions.js";
import { relationScopes, ruleWhere, type RelationRules } from "./where-rules.js";
import { isWhereRule, withUser } from "./user-where.js";
import { includeArgs, type IncludeRule } from "./include-rules.js";
import { deleteInput, getInput, historyInput, listInput, updateInput, type NearestInput } from "./inputs.js";
import type { ListLimits, LiveLimits, ResourceAction, ResourcePermission } from "./options.js";
import { liveProcedure } from "./live.js";
import { both, refuseTenantInput, tenantWhere, type Tenant } from "./tenant.js";
import { assertBatchGates, batchProcedure } from "./batch.js";
import type { RateLimitCharge } from "../../kernel/index.js";
import { accessMeta, mcp } from "../../kernel/index.js";
import type { CompiledQuery, DeleteQueryBuilder } from "kysely";
import { DELETED_AT, type SoftDelete } from "./soft-delete.js";
import { HISTORY_TAKE, type HistorySource } from "./history.js";

/** Every generated procedure but `live`: what `mcp` may tag. */
export type ToolAction = ResourceAction | "page" | "batch";

const TOOL_TEXT: Record<ToolAction, string> = {
  list: "List rows (where, orderBy, take, skip, include, search; nearest: { column, vector, k } for the k rows nearest a vector) of",
  get: "Get one row by its key (where) of",
  create: "Create a row of",
  update: "Update the columns in data of the row named by where of",
  delete: "Delete the row named by where of",
  page: "One page (where, orderBy, take, after: the nextCursor of the page before) of",
  batch: "Create, update and delete rows in one transaction (all or nothing) of",
};

/** Everything a resource's procedures need, resolved once at build. */
export interface ResourceSpec {
  name: string;
  table: TableModel;
  primaryKey: string;
  ownerColumn: string | undefined;
  permissions: Record<ResourceAction, ResourcePermission<any, any>>;
  limits: ListLimits;
  /** Items per `{name}.batch` call, creates, updates and deletes together. */
  batchLimit: number;
  /** Includable relations and the rule their rows follow (filled at build, once every resource is known). */
  includable: ReadonlyMap<string, IncludeRule>;
  /** What the relation filters of a caller's `where` may reach, and under which rules (filled at build). */
  relationRules: RelationRules;
  /** Columns a client may set on create (and, minus the primary key, on update). */
  settable: readonly string[];
  /** Set when the resource streams (`{name}.live`). */
  live: LiveLimits | undefined;
  /** Actions tagged as MCP tools. */
  mcp: readonly ToolAction[];
  base: ProcedureBase<AppRpcContext>;
  /** Lifecycle hooks (`hooks` option), bound at build; undefined when none are declared. */
  hooks: BoundHooks | undefined;
  /** Set when deleting stamps `deletedAt` (soft-delete.ts). */
  softDelete: SoftDelete | undefined;
  /** The tenant column and the caller's organization (`tenant` option); undefined when not tenant-scoped. */
  tenant?: Tenant;
  /** Whether the resource keeps a history (`{name}.history`, the `history` option). */
  keepsHistory: boolean;
  /** Where `{name}.history` reads the entries (the audit plugin's service), set at build. */
  history?: HistorySource;
}

/** How a write is made: by whom, and where its after hooks and old rows go. */
export interface WriteScope {
  caller: HookCaller;
  /** After hooks to run once the write commits. */
  after: AfterWork[];
  /** Rows read before an update, by key: the change event's `before`. */
  before: Map<string, Record<string, unknown>>;
  /** In an on-demand transaction: ends its on-demand part before the write's own statement. */
  settle?: () => boolean;
}

type Row = Record<string, unknown>;
export type ListInput = { where?: Row; orderBy?: Record<string, "asc" | "desc">[]; take?: number; skip?: number; include?: Record<string, true>; after?: string; search?: string; nearest?: NearestInput };

/** The metadata resource procedures carry: `procedure["~orpc"].meta.resource`. */
export interface ResourceMeta {
  resource: { table: string; action: ToolAction | "live"; key: string };
}

export function resourceProcedures(spec: ResourceSpec, db: AppDatabase<any>, kind: DatabaseKind, sealed: () => SealedApp, rateLimit?: RateLimitCharge) {
  const { table, primaryKey: pk, ownerColumn, permissions, hooks } = spec;
  const key = keyInput(table, pk);
  // Public and function permissions need no gate before validation: skip the middleware entirely.
  // Every procedure carries what other surfaces need to know about it (REST paths, live, admin).
  // `live` is the list as a stream: it answers to the list permission.
  // `page` answers to the list rule too; `batch` is gated by the rule of each action its input names.
  const gated = (action: ToolAction | "live", tagged = true) => {
    const rule = action === "batch" ? "public" : permissions[action === "live" || action === "page" ? "list" : action];
    const { tenant } = spec;
    // A tenant resource needs an active organization on every action, whatever the rule (401, then 403),
    // checked before the input (400), which must not name the tenant column.
    const base = !tenant ? spec.base : spec.base.use(async ({ context, next }, input) => {
      if (action === "batch") assertBatchGates(permissions, input, context);
      else if (rule !== "public" && typeof rule !== "function") assertGate(rule, context);
      await tenant.source().require(context);
      refuseTenantInput(tenant, action, input);
      return next();
    });
    return (tenant ? base : action === "batch"
      ? spec.base.use(({ context, next }, input) => {
          assertBatchGates(permissions, input, context);
          return next();
        })
      : rule === "public" || typeof rule === "function"
        ? spec.base
        : spec.base.use(({ context, next }) => {
            assertGate(rule, context);
            return next();
          })
    ).meta({
      // What every surface reports of the gate above (`trellis routes`, OpenAPI, MCP).
      ...accessMeta(action === "batch" ? batchRule(permissions) : tenant && rule === "public" ? "authenticated" : rule),
      ...(tagged && { resource: { table: table.name, action, key: pk } }),
      ...(tagged && action !== "live" && spec.mcp.includes(action) && mcp.tool({ description: `${TOOL_TEXT[action]} ${spec.name}` })),
    } satisfies Partial<ResourceMeta>);
  };
  // A soft-deleting resource sees only rows not deleted, on every action: one more condition in SQL.
  const alive: Row | undefined = spec.softDelete ? { [DELETED_AT]: null } : undefined;
  const withAlive = <T extends Row | undefined>(rule: T): Row | T => (alive ? (rule ? { AND: [rule, alive] } : alive) : rule);
  const isOwner = (action: ResourceAction) => permissions[action] === "owner";
  const ownerOf = (context: AppRpcContext) => context.user!.id;
  const encode = (data: Row) => {
    const out: Row = {};
    for (const [column, value] of Object.entries(data)) if (value !== undefined) out[column] = encodeValue(kind, table.columns[column], value);
    return out;
  };
  const decode = (row: Row) => decodeRow(kind, table, row);
  // Every column, cast where the driver would lose precision (SQLite bigint, pg date).
  const columns = rowSelection(kind, table);
  // The RPC wire encoding of this table's rows, compiled once: answers are marked with it.
  const rows = compileRowEncoder(table);
  const query = () => (db.query as Record<string, any>)[table.name];
  const checkInclude = (include: Record<string, true> | undefined) => {
    for (const relation of Object.keys(include ?? {})) {
      if (!spec.includable.has(relation)) {
        throw new RpcError("BAD_REQUEST", { message: `"${relation}" cannot be included; includable: ${[...spec.includable.keys()].join(", ") || "none"}` });
      }
    }
  };
  /** A `where` rule's condition for this caller (ANDed into the statement of get, update and delete). */
  const whereRule = (action: ResourceAction, context: AppRpcContext): Row | undefined => {
    const permission = permissions[action];
    return isWhereRule(permission) ? (withUser(permission, ownerOf(context)) as Row) : undefined;
  };
  const keyWhere = (where: Row, context: AppRpcContext, action: ResourceAction): Row =>
    isOwner(action) ? { [pk]: where[pk], [ownerColumn!]: ownerOf(context) } : { [pk]: where[pk] };

  /** The `findMany` arguments of a list call: limits checked, function permission asked, owner scoped in SQL. */
  const listArgs = async (input: ListInput, context: AppRpcContext) => {
    // Precedence: bad input (400) before a function permission's verdict (403).
    // A nearest search answers k rows: k, not take, is held to the list's maximum.
    const take = input.nearest ? input.take : (input.take ?? spec.limits.default);
    if ((take ?? 0) > spec.limits.max) throw new RpcError("BAD_REQUEST", { message: `take must be at most ${spec.limits.max}` });
    if (input.nearest && input.nearest.k > spec.limits.max) throw new RpcError("BAD_REQUEST", { message: `nearest.k must be at most ${spec.limits.max}` });
    if ((input.skip ?? 0) > spec.limits.maxSkip) throw new RpcError("BAD_REQUEST", { message: `skip must be at most ${spec.limits.maxSkip}` });
    checkInclude(input.include);
    // The rule's `where` (the owner condition, a where rule, a function's answer) is ANDed in SQL, so
    // take and skip count only visible rows; the caller's relation filters read only what they may list.
    const rule = withAlive(both(await ruleWhere(permissions.list, ownerColumn, context, false), await tenantWhere(spec.tenant, context)));
    const related = await relationScopes(spec.relationRules, table.name, input.where, context);
    const scope = rule ? { where: rule, related } : { related };
    return { where: input.where, scope, orderBy: input.orderBy, take, skip: input.skip, after: input.after, search: input.search, nearest: input.nearest, include: await includeArgs(input.include, spec.includable, context) };
  };

  const list = gated("list")
    .input(listInput())
    .handler(async ({ input = {}, context }) => rows.many((await query().findMany(await listArgs(input, context))) as Row[]));

  /**
   * The row `get` answers this caller, with the relations `include` asks for, or get's refusal: 404
   * for a row missing, not the caller's, outside a `where` rule or another organization's (or
   * soft-deleted), 403 when a function rule says no.
   */
  const readable = async (named: Row, includeFlags: Record<string, true> | undefined, context: AppRpcContext): Promise<Row> => {
    const where = spec.tenant ? { ...keyWhere(named, context, "get"), ...(await tenantWhere(spec.tenant, context)) } : keyWhere(named, context, "get");
    const include = await includeArgs(includeFlags, spec.includable, context);
    const rule = withAlive(whereRule("get", context));
    const find = (ruled: Row | undefined) => query().findFirst({ where, include, ...(ruled ? { scope: { where: ruled } } : {}) }) as Promise<Row | null>;
    let row = (include || rule ? ((await find(rule)) ?? undefined) : await byKey(db, where)) as Row | undefined;
    const verdict = await assertFunction(permissions.get, { context, row });
    // A function that answers with a `where`: the row must match it too, read again in SQL.
    if (verdict && row) row = (await find(verdict)) ?? undefined;
    if (!row) throw notFound(spec.name);
    return row;
  };

  const get = gated("get")
    .input(getInput(key))
    .handler(async ({ input, context }) => {
      checkInclude(input.include);
      return rows.one(await readable(input.where, input.include, context));
    });

  const writeScope = (context: AppRpcContext): WriteScope => ({ caller: { context, user: context.user, actor: writeActor(context) }, after: [], before: new Map() });
  /** The writes, on any executor: the database itself, or a transaction (the write's own, or a batch's). */
  const createRow = async (executor: AppDatabase<any>, input: Row, context: AppRpcContext, scope: WriteScope) => {
    await assertFunction(permissions.create, { context });
    let data: Row = { ...input };
    if (ownerColumn && context.user) data[ownerColumn] = context.user.id;
    const tenant = await tenantWhere(spec.tenant, context);
    if (tenant) data = { ...data, ...tenant };
    if (hooks) data = known(await hooks.beforeCreate(executor, scope.caller, data));
    // A hook may change the data, never the organization the row belongs to.
    if (tenant) data = { ...data, ...tenant };
    // A hook that sent no statement began no transaction: the insert then runs alone (autocommit).
    scope.settle?.();
    const values = encode(data);
    const insert = executor.insertInto(table.name);
    const row = decode(await (Object.keys(values).length ? insert.values(values) : insert.defaultValues()).returning(columns).executeTakeFirstOrThrow());
    const after = hooks?.after("afterCreate", scope.caller, { row });
    if (after) scope.after.push(after);
    return row;
  };
  const updatable = spec.settable.filter((column) => column !== pk);
  // The old row is read (locked) first when something needs it: a function rule, an update hook, a change listener.
  const readsBefore = () => typeof permissions.update === "function" || !!hooks?.has("beforeUpdate") || !!hooks?.has("afterUpdate") || !!sealed().service("change-before")?.has(table.name);
  const updateRow = async (executor: AppDatabase<any>, input: { where: Row; data: Row }, context: AppRpcContext, scope: WriteScope) => {
    let values = encode(input.data);
    if (Object.keys(values).length === 0) {
      throw new RpcError("BAD_REQUEST", { message: `Nothing to update: data needs at least one of ${updatable.join(", ")}` });
    }
    const where = encode({ ...keyWhere(input.where, context, "update"), ...(await tenantWhere(spec.tenant, context)) });
    let before: Row | undefined;
    // A where rule, or the `where` a function rule answers with, is ANDed into the write itself.
    let rule = withAlive(whereRule("update", context));
    if (readsBefore()) {
      const checked = await checkRow(executor, "update", where, context, rule);
      before = checked.row;
      rule = checked.verdict ?? rule;
      scope.before.set(String(before[pk]), before);
      if (hooks?.has("beforeUpdate")) values = encode(known(await hooks.beforeUpdate(executor, scope.caller, before, { ...input.data })));
      // A row stays in its organization, whatever a hook answers.
      if (spec.tenant) delete values[spec.tenant.column];
      if (Object.keys(values).length === 0) throw new RpcError("BAD_REQUEST", { message: "Nothing to update: the beforeUpdate hook left no column to set" });
    }
    let statement = executor.updateTable(table.name).set(values);
    for (const [column, value] of Object.entries(where)) statement = statement.where(column, "=", value);
    if (rule) statement = statement.where(query().predicate(rule));
    const found = await statement.returning(columns).executeTakeFirst();
    if (!found) throw notFound(spec.name);
    const row = decode(found);
    const after = before && hooks?.after("afterUpdate", scope.caller, { before, row });
    if (after) scope.after.push(after);
    return row;
  };
  const deleteRow = async (executor: AppDatabase<any>, input: { where: Row }, context: AppRpcContext, scope: WriteScope) => {
    const where = encode({ ...keyWhere(input.where, context, "delete"), ...(await tenantWhere(spec.tenant, context)) });
    let rule = withAlive(whereRule("delete", context));
    if (typeof permissions.delete === "function" || hooks?.has("beforeDelete")) {
      const checked = await checkRow(executor, "delete", where, context, rule);
      rule = withAlive(checked.verdict ?? rule);
      if (hooks) await hooks.beforeDelete(executor, scope.caller, checked.row);
    }
    // Soft: the same statement shape (where, returning) as an update stamping deletedAt.
    let statement = (alive ? executor.updateTable(table.name).set(encode({ [DELETED_AT]: new Date() })) : executor.deleteFrom(table.name)) as DeleteQueryBuilder<any, string, {}>;
    for (const [column, value] of Object.entries(where)) statement = statement.where(column, "=", value);
    if (rule) statement = statement.where(query().predicate(rule));
    const found = await statement.returning(columns).executeTakeFirst();
    if (!found) throw notFound(spec.name);
    const row = decode(found);
    const after = hooks?.after("afterDelete", scope.caller, { row });
    if (after) scope.after.push(after);
    return row;
  };
  /** What a hook returned, kept to the table's columns (the codec knows no others). */
  const known = (data: Row): Row => {
    const out: Row = {};
    for (const column of Object.keys(data)) if (Object.hasOwn(table.columns, column)) out[column] = data[column];
    return out;
  };

  // One statement: autocommit is atomic, so no BEGIN/COMMIT round trips around it.
  const createSchema = createInput(table, spec.settable);
  const create = gated("create")
    .input(createSchema)
    .handler(async ({ input, context }) => rows.one(await writeOnce("create", context, (executor, scope) => createRow(executor, input, context, scope))));

  const updateSchema = updateInput(key, updateData(table, updatable));
  const update = gated("update")
    .input(updateSchema)
    .handler(async ({ input, context }) => rows.one(await writeOnce("update", context, (executor, scope) => updateRow(executor, input, context, scope))));

  const deleteSchema = deleteInput(key);
  const remove = gated("delete")
    .input(deleteSchema)
    .handler(async ({ input, context }) => rows.one(await writeOnce("delete", context, (executor, scope) => deleteRow(executor, input, context, scope))));

  /**
   * A write is one statement (`WHERE pk = ? AND owner = ?` holds the owner check), needing no
   * transaction; only a function permission or a `before*` hook, which must see the row (or run)
   * before the write, adds a transaction around both. Its writes carry the caller to the change
   * feed; its after hooks run once it has committed.
   */
  async function writeOnce<T>(action: ResourceAction, context: AppRpcContext, fn: (executor: AppDatabase<any>, scope: WriteScope) => Promise<T>): Promise<T> {
    const scope = writeScope(context);
    const reads = typeof permissions[action] === "function" || (action === "update" && readsBefore());
    const hooked = !!hooks?.transacts(action as "create");
    // A beforeCreate reads nothing first: its transaction begins with the first statement it sends, if any.
    const run = reads || (hooked && action !== "create") ? () => db.transact((trx) => fn(trx, scope))
      : hooked ? () => transactOnDemand(db, (settle) => fn(db, { ...scope, settle }))
      : () => fn(db, scope);
    const result = await attributeWrites({ table: table.name, actor: scope.caller.actor, before: scope.before }, run);
    await afterCommit(db, scope.after);
    return result;
  }

  /**
   * The row with these column values (the key, and the owner when scoped): one plain select. Its
   * SQL depends only on which columns are matched, so it is built and compiled once per set of
   * columns and each call sends it with its own values (Kysely's query compilation was about a
   * tenth of a get's request-thread time).
   */
  const byKeyStatements = new Map<string, CompiledQuery>();
  async function byKey(executor: AppDatabase<any>, where: Row): Promise<Row | undefined> {
    const values = encode(where);
    const matched = Object.keys(values);
    const parameters = matched.map((column) => values[column]);
    const shape = matched.join("\0");
    let compiled = byKeyStatements.get(shape);
    if (!compiled) {
      let select = executor.selectFrom(table.name).select(columns) as any;
      for (const column of matched) select = select.where(column, "=", values[column]);
      compiled = select.compile() as CompiledQuery;
      // Reused only when its parameters are exactly these values, in this order.
      if (compiled.parameters.length === parameters.length && compiled.parameters.every((value, i) => value === parameters[i])) byKeyStatements.set(shape, compiled);
    }
    const { rows: found } = await executor.executeQuery<Row>({ ...compiled, parameters });
    return found[0] ? decode(found[0]) : undefined;
  }

  /**
   * The row before the write, locked, inside the write's transaction and under the caller's where
   * rule: a function permission sees it (and refuses, or answers with a `where` the write must also
   * match), a missing, not-owned or out-of-rule row is a 404.
   */
  async function checkRow(trx: any, action: ResourceAction, where: Row, context: AppRpcContext, rule?: Row): Promise<{ row: Row; verdict?: Row }> {
    let select = trx.selectFrom(table.name).select(columns);
    for (const [column, value] of Object.entries(where)) select = select.where(column, "=", value);
    if (rule) select = select.where(query().predicate(rule));
    if (kind === "postgres") select = select.forUpdate();
    const found = await select.executeTakeFirst();
    const row = found ? decode(found) : undefined;
    const verdict = (await assertFunction(permissions[action], { context, row })) as Row | undefined;
    if (!row) throw notFound(spec.name);
    return { row, verdict };
  }

  // `{name}.page` rather than `list({ page: true })`: one return type per procedure keeps the typed
  // client's answer exact (rows for list, { items, nextCursor } for page) without a union to narrow.
  const page = gated("page")
    .input(listInput())
    .handler(async ({ input = {}, context }) => rows.page((await query().findPage(await listArgs(input, context))) as { items: Row[]; nextCursor: string | null }));

  const batch = batchProcedure(spec, gated("batch"), db, rateLimit, { create: createSchema, update: updateSchema, delete: deleteSchema }, { create: createRow, update: updateRow, delete: deleteRow }, writeScope);

  // Brings a soft-deleted row back, under the delete permission (a row that is not deleted is a 404).
  const restore = gated("delete", false)
    .input(deleteSchema)
    .handler(async ({ input, context }) =>
      rows.one(
        await writeOnce("delete", context, async (executor) => {
          const where = encode(keyWhere(input.where, context, "delete"));
          const rule = whereRule("delete", context);
          let statement = executor.updateTable(table.name).set(encode({ [DELETED_AT]: null })).where(DELETED_AT, "is not", null);
          for (const [column, value] of Object.entries(where)) statement = statement.where(column, "=", value);
          if (rule) statement = statement.where(query().predicate(rule));
          const found = await statement.returning(columns).executeTakeFirst();
          if (!found) throw notFound(spec.name);
          const row = decode(found);
          // A function permission sees the row it brings back; refusing rolls the restore back (writeOnce's transaction).
          await assertFunction(permissions.delete, { context, row });
          return row;
        }),
      ),
    );

  // A row's audit entries, to whoever may get it: get's gate, then get's own lookup (its 404 or 403).
  const history = gated("get", false)
    .input(historyInput(key, HISTORY_TAKE.max))
    .handler(async ({ input, context }) => {
      const row = await readable(input.where, undefined, context);
      return spec.history!.row(table.name, String(row[pk]), { cursor: input.cursor, take: input.take ?? HISTORY_TAKE.default });
    });

  const procedures = { list, get, create, update, delete: remove, page, batch, ...(alive && { restore }), ...(spec.keepsHistory && { history }) };
  if (!spec.live) return procedures;
  return { ...procedures, live: liveProcedure(spec, gated("live"), { listArgs, query, sealed }) };
}

/**
 * The rule `{name}.batch` reports: each item answers to its own action's rule, so it is public only
 * when every write is; otherwise the strictest rule that needs a session stands for it.
 */
function batchRule(permissions: ResourceSpec["permissions"]): ResourcePermission<any, any> {
  const rules = (["create", "update", "delete"] as const).map((write) => permissions[write]);
  return rules.find((rule) => rule === "admin") ?? rules.find((rule) => rule !== "public" && typeof rule !== "function") ?? rules.find((rule) => typeof rule === "function") ?? "public";
}

function notFound(name: string) {
  return new RpcError("NOT_FOUND", { message: `No ${name} matches` });
}
