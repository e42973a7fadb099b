import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { ColumnModel, SchemaModel, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { WhereError, isPlainObject } from "./query-error.js";
import { ValueError, encodeValue } from "./values.js";
import { compare, likePattern, textMatch, type TextOperator } from "./where-text.js";
import { MAX_WHERE_DEPTH, foldWhere } from "./where-walk.js";
import { MAX_IN_VALUES, QueryBudget } from "./query-limits.js";
import { relationFilter, type Predicate, type RelationScopes } from "./where-relations.js";

export { WhereError } from "./query-error.js";
export { MAX_IN_VALUES, MAX_QUERY_VALUES as MAX_WHERE_VALUES } from "./query-limits.js";

/**
 * Compiles the `where` language (DESIGN.md section 5) into a Kysely expression for one table.
 *
 * - `{ col: value }` is equality, `{ col: null }` is IS NULL, `{ col: { op: value, ... } }` ANDs
 *   operators; `AND`/`OR` take arrays (or one object), `NOT` an object or an array (none may match).
 * - NULL follows SQL, as in Prisma: a comparison with a NULL column is unknown, so `not`, `notIn`
 *   and `NOT` leave out rows whose column is NULL (`{ status: { not: "draft" } }` skips a NULL
 *   status); add `{ status: { isNull: true } }` in an `OR` to keep them.
 * - `in: []` matches nothing, `notIn: []` everything, `OR: []` nothing, `AND: []` everything.
 * - `contains`/`startsWith`/`endsWith` are case-sensitive on both families and match the value
 *   literally: Postgres uses LIKE with `%`, `_` and `\` escaped and an explicit ESCAPE clause;
 *   SQLite uses GLOB with its wildcards bracketed, because SQLite's LIKE ignores ASCII case.
 * - Every value is validated against the column type and bound as a parameter, never spliced, and
 *   counted against the query's budget (query-limits.ts), text operands by their length too.
 * - The boolean shape is walked by `foldWhere` (where-walk.ts), the same walk every column check uses.
 * - Keys `AND`, `OR` and `NOT` are always logical, even where a table has columns so named.
 * - A key naming a relation (with `model` given) is a relation filter, an EXISTS subquery
 *   (where-relations.ts).
 */

export type Where = Record<string, unknown>;

export interface WhereOptions {
  /** Qualifies column references (`"post"."title"`), for statements that join or nest tables. */
  qualifier?: string;
  /**
   * Where the `where` sits in the caller's arguments, for error paths.
   * @default "where"
   */
  path?: string;
  /** What the whole query may still bind; shared by a query's `where` and its includes' `where`. */
  budget?: QueryBudget;
  /** The schema: with it, relation names are relation filters (`{ comments: { some: {...} } }`). */
  model?: SchemaModel;
  /**
   * The condition rows of each table must meet inside relation filters, by table (`true`: every
   * row); a relation filter reaching a table not listed is 400. Absent: every row of every table
   * (server code's own queries). Conditions are trusted: their own relation filters are not scoped.
   */
  related?: RelationScopes;
  /** Collects every table a relation filter reads (what a live query must watch). */
  tables?: Set<string>;
  /** Relation filters this `where` sits inside (0 at the top). */
  depth?: number;
}

/** Matches-everything and matches-nothing are kept apart so `AND`/`OR` can fold them away. */

const OPERATORS = new Set(["equals", "not", "in", "notIn", "lt", "lte", "gt", "gte", "contains", "startsWith", "endsWith", "isNull"]);
const ORDERED_TYPES = new Set(["serial", "integer", "real", "bigint", "decimal", "timestamp", "date"]);
const TEXT_TYPES = new Set(["text", "varchar", "uuid"]);

/**
 * The predicate of `where` for `table`, or undefined when it constrains nothing (absent, `{}`,
 * `AND: []`). Throws `WhereError` (status 400, with `path`) for anything that does not fit.
 */
export function compileWhere(
  kind: DatabaseKind,
  table: TableModel,
  where: unknown,
  options: WhereOptions = {},
): RawBuilder<SqlBool> | undefined {
  if (where === undefined || where === null) return undefined;
  const compiled = wherePredicate(kind, table, where, options);
  if (compiled === true) return undefined;
  return compiled === false ? sql<SqlBool>`1 = 0` : compiled;
}

/** `compileWhere` with matches-everything and matches-nothing kept as `true` and `false`. */
export function wherePredicate(kind: DatabaseKind, table: TableModel, where: unknown, options: WhereOptions = {}): Predicate {
  const path = options.path ?? "where";
  const compiler = new WhereCompiler(kind, table, path, { ...options, budget: options.budget ?? new QueryBudget() });
  return foldWhere<Predicate>(
    where,
    { column: (name, value, at) => compiler.column(name, value, at), and, or, none: (parts) => and(parts.map(negate)) },
    path,
  );
}

class WhereCompiler {
  private readonly qualifier: string | undefined;
  private readonly budget: QueryBudget;

  constructor(
    private readonly kind: DatabaseKind,
    private readonly table: TableModel,
    private readonly root: string,
    private readonly options: WhereOptions & { budget: QueryBudget },
  ) {
    this.qualifier = options.qualifier;
    this.budget = options.budget;
  }

  column(name: string, value: unknown, path: string): Predicate {
    const column = Object.hasOwn(this.table.columns, name) ? this.table.columns[name] : undefined;
    const relations = this.options.model?.relations[this.table.name];
    if (!column && relations && Object.hasOwn(relations, name)) {
      return relationFilter(this.kind, this.options.model!, relations[name]!, value, path, {
        ...this.options,
        root: this.root,
        outer: this.qualifier ?? this.table.name,
        compile: wherePredicate,
        all: and,
      });
    }
    if (!column) throw new WhereError(path, `unknown column "${name}" on table "${this.table.name}"`);
    if (isPlainObject(value)) return this.operators(name, column, value, path);
    return this.operator(name, column, "equals", value, path);
  }

  private operators(name: string, column: ColumnModel, ops: Record<string, unknown>, path: string): Predicate {
    const parts: Predicate[] = [];
    for (const [op, value] of Object.entries(ops)) {
      if (value === undefined) continue;
      if (!OPERATORS.has(op)) throw new WhereError(`${path}.${op}`, `unknown operator "${op}" (use ${[...OPERATORS].join(", ")})`);
      parts.push(this.operator(name, column, op, value, `${path}.${op}`));
    }
    return and(parts);
  }

  private operator(name: string, column: ColumnModel, op: string, value: unknown, path: string): Predicate {
    const ref = this.qualifier ? sql.id(this.qualifier, name) : sql.id(name);
    const isNull = sql<SqlBool>`${ref} is null`;
    if (op === "isNull") {
      if (typeof value !== "boolean") throw new WhereError(path, "expected true or false");
      // Binds nothing, but is a clause to compile and evaluate: it counts like any operand.
      this.budget.value(this.root);
      return value ? isNull : sql<SqlBool>`${ref} is not null`;
    }
    if ((column.type === "jsonb" || column.type === "vector") && !(value === null && (op === "equals" || op === "not"))) {
      throw new WhereError(path, `${column.type} columns can only be filtered with isNull (or equals null)${column.type === "vector" ? "; use nearest to search by distance" : ""}`);
    }
    if (op === "not" && isPlainObject(value)) {
      // `not` nests inside an operator object, beside the depth `node` counts: bound it too.
      if (path.split(".not").length - 1 > MAX_WHERE_DEPTH) throw new WhereError(path, `nested more than ${MAX_WHERE_DEPTH} levels deep`);
      return negate(this.operators(name, column, value, path));
    }
    if (value === null) {
      if (op === "equals" || op === "not") this.budget.value(this.root);
      if (op === "equals") return isNull;
      if (op === "not") return sql<SqlBool>`${ref} is not null`;
      throw new WhereError(path, "null is only allowed with equals and not (or use isNull)");
    }
    switch (op) {
      case "equals":
        return compare(this.kind, column, ref, "=", this.encode(column, value, path));
      case "not":
        return compare(this.kind, column, ref, "<>", this.encode(column, value, path));
      case "in":
      case "notIn": {
        const values = this.encodeList(column, value, path);
        if (values.length === 0) return op === "notIn";
        const inList = compare(this.kind, column, ref, "in", values);
        return op === "in" ? inList : sql<SqlBool>`not ${inList}`;
      }
      case "lt":
      case "lte":
      case "gt":
      case "gte": {
        if (!ORDERED_TYPES.has(column.type)) throw new WhereError(path, `${op} applies to numbers, decimals, dates and timestamps, not to a ${column.type} column`);
        const symbol = { lt: "<", lte: "<=", gt: ">", gte: ">=" }[op];
        return compare(this.kind, column, ref, symbol, this.encode(column, value, path));
      }
      default: {
        if (!TEXT_TYPES.has(column.type)) throw new WhereError(path, `${op} applies to text columns, not to a ${column.type} column`);
        if (typeof value !== "string") throw new WhereError(path, "expected a string");
        this.budget.text(path, this.root, value.length);
        return textMatch(this.kind, column, ref, likePattern(this.kind, op as TextOperator, value));
      }
    }
  }

  private encode(column: ColumnModel, value: unknown, path: string): unknown {
    this.budget.value(this.root);
    try {
      return encodeValue(this.kind, column, value);
    } catch (error) {
      if (error instanceof ValueError) throw new WhereError(path, error.message);
      throw error;
    }
  }

  private encodeList(column: ColumnModel, value: unknown, path: string): unknown[] {
    if (!Array.isArray(value)) throw new WhereError(path, "expected an array");
    if (value.length > MAX_IN_VALUES) throw new WhereError(path, `at most ${MAX_IN_VALUES} values`);
    return value.map((item, i) => {
      if (item === null || item === undefined) throw new WhereError(`${path}[${i}]`, "null is not a value here (use isNull)");
      return this.encode(column, item, `${path}[${i}]`);
    });
  }
}

function negate(inner: Predicate): Predicate {
  if (typeof inner === "boolean") return !inner;
  return sql<SqlBool>`not ${inner}`;
}

function and(parts: Predicate[]): Predicate {
  if (parts.includes(false)) return false;
  const real = parts.filter((p): p is RawBuilder<SqlBool> => p !== true);
  if (real.length === 0) return true;
  return balanced(real, sql` and `);
}

function or(parts: Predicate[]): Predicate {
  if (parts.includes(true)) return true;
  const real = parts.filter((p): p is RawBuilder<SqlBool> => p !== false);
  if (real.length === 0) return false;
  return balanced(real, sql` or `);
}

/**
 * `(a op b op c ...)` grouped as a balanced tree of at most 64 terms per group: SQLite parses a flat
 * chain as an expression as deep as it is long and refuses past 1000 (an `OR` of 1,001 equalities
 * was a 500); grouped, 20,000 terms nest three levels deep.
 */
function balanced(parts: RawBuilder<SqlBool>[], op: RawBuilder<unknown>): RawBuilder<SqlBool> {
  if (parts.length === 1) return parts[0]!;
  if (parts.length <= GROUP) return sql<SqlBool>`(${sql.join(parts, op)})`;
  const size = Math.ceil(parts.length / GROUP);
  const groups: RawBuilder<SqlBool>[] = [];
  for (let i = 0; i < parts.length; i += size) groups.push(balanced(parts.slice(i, i + size), op));
  return balanced(groups, op);
}

const GROUP = 64;
