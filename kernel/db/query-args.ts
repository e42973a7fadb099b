import { sql, type RawBuilder, type SqlBool } from "kysely";
import { primaryKeyOf, type RelationModel, type SchemaModel, type TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { QueryError, isPlainObject } from "./query-error.js";
import type { Direction, Ordering } from "./select-sql.js";
import { RELATED } from "./relations.js";
import { compileWhere } from "./where.js";
import type { RelationScopes } from "./where-relations.js";
import { DEFAULT_QUERY_LIMITS, QueryBudget, type QueryLimits } from "./query-limits.js";
import { afterCursor, readCursor } from "./cursor.js";
import { planNearest, type NearestPlan } from "./nearest.js";
import { planSearch, type SearchPlan } from "./search-sql.js";

/** `findMany`/`findFirst`/`count` arguments checked against the schema, ready to compile. */
export interface FindPlan {
  readonly where?: RawBuilder<SqlBool>;
  /** The caller's ordering, then the primary key as a tie-breaker so pages are stable. */
  readonly ordering: Ordering;
  /** Set when a search orders by rank (no `orderBy` given): the first ORDER BY term, before `ordering`. */
  readonly rank?: SearchPlan["rank"];
  readonly take?: number;
  readonly skip?: number;
  readonly include: readonly IncludePlan[];
  /** `nearest`: the k rows nearest a vector, ordered by distance (then `ordering` is empty). */
  readonly nearest?: NearestPlan;
  /** Tables the relation filters of `where` and `scope.where` read (a live query watches them too). */
  readonly related: readonly string[];
}

/** One included relation, and the condition its rows must meet (compiled against `RELATED`). */
export interface IncludePlan {
  readonly relation: RelationModel;
  readonly where?: RawBuilder<SqlBool>;
}

const FIND_KEYS = new Set(["where", "orderBy", "take", "skip", "include", "after", "search", "nearest", "scope"]);

/** `limits` bound the whole query: its `where` and every include's `where` share one budget. */
export function planFind(
  kind: DatabaseKind,
  model: SchemaModel,
  table: TableModel,
  args: unknown,
  allowed = FIND_KEYS,
  limits: Required<QueryLimits> = DEFAULT_QUERY_LIMITS,
): FindPlan {
  if (args === undefined || args === null) args = {};
  if (!isPlainObject(args)) throw new QueryError("args", "expected an object");
  for (const key of Object.keys(args)) {
    if (!allowed.has(key)) throw new QueryError(key, `unknown argument (use ${[...allowed].join(", ")})`);
  }
  const budget = new QueryBudget(limits);
  const nearest = args.nearest === undefined || args.nearest === null ? undefined : planNearest(kind, table, args);
  const tables = new Set<string>();
  const scope = readScope(args.scope);
  const where = { qualifier: table.name, budget, model, tables };
  const compiled = andAll([
    compileWhere(kind, table, args.where, { ...where, ...(scope.related ? { related: scope.related } : {}) }),
    compileWhere(kind, table, scope.where, { ...where, path: "scope.where" }),
  ]);
  const filter = nearest ? (compiled ? sql<SqlBool>`(${compiled}) and ${nearest.present(table.name)}` : nearest.present(table.name)) : compiled;
  const order = ordering(table, args.orderBy);
  // `after`: keyset over the full ordering, ANDed with the caller's where (and so any owner scope).
  if (args.after !== undefined && args.after !== null && primaryKeyOf(table) === undefined) {
    throw new QueryError("after", `table "${table.name}" has no primary key to page by`);
  }
  const keyset = args.after === undefined || args.after === null ? undefined : afterCursor(kind, table, order, readCursor(kind, table, order, args.after));
  // A search narrows the same where (owner scope included) and, without an orderBy, orders by rank;
  // beside nearest, which orders by distance, it only narrows.
  const search = planSearch(kind, table, args.search);
  const rank = search && !nearest && (args.orderBy === undefined || args.orderBy === null) ? search.rank : undefined;
  if (rank && keyset) throw new QueryError("after", RANK_NOT_PAGED);
  const all = andAll([filter, keyset, search?.where]);
  return {
    ...(all ? { where: all } : {}),
    ordering: nearest ? [] : order,
    ...(rank ? { rank } : {}),
    ...(nearest ? { take: nearest.k, nearest } : { ...count("take", args.take), ...count("skip", args.skip) }),
    include: relations(kind, model, table, args.include, budget),
    related: [...tables],
  };
}

function andAll(parts: Array<RawBuilder<SqlBool> | undefined>): RawBuilder<SqlBool> | undefined {
  return parts.filter((part) => part !== undefined).reduce<RawBuilder<SqlBool> | undefined>((all, part) => (all ? sql<SqlBool>`(${all}) and ${part}` : part), undefined);
}

/** `scope`: `{ where?, related? }` (FindManyArgs.scope), shape-checked. */
function readScope(scope: unknown): { where?: unknown; related?: RelationScopes } {
  if (scope === undefined || scope === null) return {};
  if (!isPlainObject(scope)) throw new QueryError("scope", "expected { where?, related? }");
  for (const key of Object.keys(scope)) if (key !== "where" && key !== "related") throw new QueryError(`scope.${key}`, "unknown argument (use where, related)");
  if (scope.related !== undefined && !isPlainObject(scope.related)) throw new QueryError("scope.related", "expected an object of table: where | true");
  return { where: scope.where, ...(scope.related ? { related: scope.related as RelationScopes } : {}) };
}

/** Rank is a float computed per query, not a stored value a cursor can hold. */
export const RANK_NOT_PAGED = "a search ordered by rank has no cursor pages: give an orderBy to page it by cursor, or use list with skip";

function ordering(table: TableModel, orderBy: unknown): Ordering {
  const out: [string, Direction][] = [];
  if (orderBy !== undefined && orderBy !== null) {
    // One `{ column: direction }` alone is accepted as a one-entry array.
    const entries = Array.isArray(orderBy) ? orderBy : [orderBy];
    entries.forEach((entry, i) => {
      const path = Array.isArray(orderBy) ? `orderBy[${i}]` : "orderBy";
      const keys = isPlainObject(entry) ? Object.keys(entry) : [];
      if (keys.length !== 1) throw new QueryError(path, 'expected one { column: "asc" | "desc" } per entry');
      const [name] = keys as [string];
      const direction = (entry as Record<string, unknown>)[name];
      if (!Object.hasOwn(table.columns, name)) throw new QueryError(`${path}.${name}`, `unknown column "${name}" on table "${table.name}"`);
      if (direction !== "asc" && direction !== "desc") throw new QueryError(`${path}.${name}`, 'expected "asc" or "desc"');
      const type = table.columns[name]!.type;
      if (type === "jsonb" || type === "bytes" || type === "vector") throw new QueryError(`${path}.${name}`, `a ${type} column cannot be ordered by`);
      out.push([name, direction]);
    });
  }
  const key = primaryKeyOf(table);
  if (key !== undefined && !out.some(([name]) => name === key)) out.push([key, "asc"]);
  return out;
}

function count(name: "take" | "skip", value: unknown): { take?: number } | { skip?: number } {
  if (value === undefined || value === null) return {};
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new QueryError(name, "expected a non-negative integer");
  }
  return { [name]: value };
}

function relations(kind: DatabaseKind, model: SchemaModel, table: TableModel, include: unknown, budget: QueryBudget): IncludePlan[] {
  if (include === undefined || include === null) return [];
  if (!isPlainObject(include)) throw new QueryError("include", "expected an object of { relation: true }");
  const declared = model.relations[table.name] ?? {};
  const out: IncludePlan[] = [];
  for (const [name, wanted] of Object.entries(include)) {
    const relation = Object.hasOwn(declared, name) ? declared[name] : undefined;
    if (!relation) {
      const known = Object.keys(declared);
      throw new QueryError(`include.${name}`, `unknown relation "${name}" on table "${table.name}"${known.length ? ` (use ${known.join(", ")})` : ""}`);
    }
    if (wanted === true) out.push({ relation });
    else if (isPlainObject(wanted)) out.push(filtered(kind, model, relation, wanted, `include.${name}`, budget));
    else if (wanted !== false && wanted !== undefined) throw new QueryError(`include.${name}`, "expected true or { where }");
  }
  return out;
}

/** `{ where }`: only related rows that match are included (the parent rows are not filtered). */
function filtered(kind: DatabaseKind, model: SchemaModel, relation: RelationModel, args: Record<string, unknown>, path: string, budget: QueryBudget): IncludePlan {
  for (const key of Object.keys(args)) if (key !== "where") throw new QueryError(`${path}.${key}`, "unknown argument (use where)");
  const where = compileWhere(kind, model.tables[relation.target]!, args.where, { qualifier: RELATED, path: `${path}.where`, budget, model });
  return where ? { relation, where } : { relation };
}
