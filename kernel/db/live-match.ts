import type { DatabaseKind } from "../contracts/resources.js";
import { primaryKeyOf, type ColumnModel, type TableModel } from "../schema/model.js";
import { isPlainObject } from "./query-error.js";
import { foldWhere } from "./where-walk.js";

/**
 * Whether a written row can change a live query's result, decided in memory so a write re-runs
 * only the queries it can affect. The answer must never be "no" when SQL could say "yes": every
 * doubt (a column the row does not carry, a type whose comparison SQL does differently from
 * JavaScript) answers "maybe", and "maybe" re-runs.
 *
 * A filter is evaluated in SQL's three-valued logic over sets of possible outcomes: a comparison
 * that cannot be decided is {true, false, null}, and `AND`, `OR` and `NOT` combine the sets, so a
 * partial answer still rules rows out when another part of the filter decides.
 */

const TRUE = 1;
const FALSE = 2;
const NULL = 4;
const ANY = TRUE | FALSE | NULL;

type Outcomes = number;
type Row = Readonly<Record<string, unknown>>;
type Test = (row: Row) => Outcomes;

/** How rows of one table are read: its key, and each column's value in a form equal values share. */
export interface LiveTable {
  readonly name: string;
  /** The primary key column. */
  readonly key: string;
  /** A key value (of a snapshot row, a written row or a change's `keys`) as text; undefined when unreadable. */
  keyOf(value: unknown): string | undefined;
  /** The column's value in `row` as comparable text, null for SQL NULL, undefined when unknown. */
  valueOf(column: string, row: Row): string | null | undefined;
}

/** A column every matching row equals (`{ ownerId: "u1" }` at the top of `where`): the hub's index. */
export interface Pin {
  readonly column: string;
  readonly value: string;
}

/** A live query's filter, as the hub matches written rows against it. */
export interface LiveFilter {
  readonly table: LiveTable;
  /** False only when `row` certainly fails the query's `where`. */
  mayMatch(row: Row): boolean;
  /** Equalities every matching row satisfies; empty when `where` pins no column. */
  readonly pins: readonly Pin[];
}

/** Types whose SQL equality is JavaScript's on a canonical text (collations are bytewise for `=`). */
const INTEGERS = new Set(["serial", "integer", "bigint"]);
const TEXTS = new Set(["text", "varchar", "uuid"]);

/**
 * `value` as text that is equal exactly when SQL's `=` says so, null for NULL, undefined when it
 * cannot be told (an absent column, a type left to SQL: real, decimal, dates, jsonb, bytes).
 * Accepts what drivers return (numbers, strings, 0/1 booleans on SQLite, BigInt) and JSON.
 */
function canonical(kind: DatabaseKind, column: ColumnModel, value: unknown): string | null | undefined {
  if (value === null) return null;
  switch (column.type) {
    case "text":
    case "varchar":
      return typeof value === "string" ? value : undefined;
    case "uuid":
      // Postgres compares uuids as values and prints them lower-case; SQLite keeps the text given.
      return typeof value === "string" ? (kind === "postgres" ? value.toLowerCase() : value) : undefined;
    case "serial":
    case "integer":
    case "bigint":
      if (typeof value === "number") return Number.isSafeInteger(value) ? String(value) : undefined;
      if (typeof value === "bigint") return value.toString();
      return typeof value === "string" && /^-?\d+$/.test(value) ? BigInt(value).toString() : undefined;
    case "boolean":
      if (value === true || value === 1) return "t";
      if (value === false || value === 0) return "f";
      return undefined;
    default:
      return undefined;
  }
}

export function liveTable(kind: DatabaseKind, table: TableModel): LiveTable | undefined {
  const key = primaryKeyOf(table);
  const keyColumn = key === undefined ? undefined : table.columns[key];
  if (key === undefined || !keyColumn || !(INTEGERS.has(keyColumn.type) || TEXTS.has(keyColumn.type))) return undefined;
  return {
    name: table.name,
    key,
    keyOf: (value) => canonical(kind, keyColumn, value) ?? undefined,
    valueOf: (column, row) => {
      const model = table.columns[column];
      return model && Object.hasOwn(row, column) ? canonical(kind, model, row[column]) : undefined;
    },
  };
}

/**
 * The filter of `findMany(args)` on `table`, or undefined when a written row cannot decide it: an
 * `include` (related rows change the result), or `skip` (a row before the window shifts it).
 * `args` were validated by the query planner already.
 */
export function liveFilter(kind: DatabaseKind, table: LiveTable, model: TableModel, args: Record<string, unknown>): LiveFilter | undefined {
  if (args.include !== undefined && args.include !== null && Object.values(args.include as object).some(Boolean)) return undefined;
  if (typeof args.skip === "number" && args.skip > 0) return undefined;
  const where = args.where;
  if (where === undefined || where === null) return { table, mayMatch: () => true, pins: [] };
  const compiler = new TestCompiler(kind, model);
  const test = foldWhere<Test>(where, { column: (name, value) => compiler.column(name, value), and: all, or: any, none: (parts) => all(parts.map(negate)) });
  return { table, mayMatch: (row) => (test(row) & TRUE) !== 0, pins: pinsOf(kind, model, where) };
}

/** The top-level equalities of `where`: the parts of its outer `AND` that name one value. */
function pinsOf(kind: DatabaseKind, model: TableModel, where: unknown): Pin[] {
  return foldWhere<Pin[]>(where, {
    column(name, value) {
      const wanted = isPlainObject(value) ? value.equals : value;
      const text = isPlainObject(wanted) ? undefined : canonical(kind, model.columns[name]!, wanted);
      return typeof text === "string" ? [{ column: name, value: text }] : [];
    },
    and: (parts) => parts.flat(),
    or: (parts) => (parts.length === 1 ? parts[0]! : []),
    none: () => [],
  });
}

class TestCompiler {
  constructor(
    private readonly kind: DatabaseKind,
    private readonly model: TableModel,
  ) {}

  column(name: string, value: unknown): Test {
    const column = this.model.columns[name]!;
    if (!isPlainObject(value)) return this.operator(name, column, "equals", value);
    return all(Object.entries(value).flatMap(([op, operand]) => (operand === undefined ? [] : [this.operator(name, column, op, operand)])));
  }

  private operator(name: string, column: ColumnModel, op: string, operand: unknown): Test {
    const read = (row: Row) => (Object.hasOwn(row, name) ? row[name] : undefined);
    if (op === "isNull" || operand === null) {
      // `equals: null` and `isNull: true` are IS NULL, `not: null` and `isNull: false` IS NOT NULL: never NULL themselves.
      const wantNull = op === "isNull" ? operand === true : op === "equals";
      return (row) => {
        const value = read(row);
        // A jsonb `null` reads as null too, yet IS NOT NULL: only SQL can tell them apart.
        if (value === undefined || (value === null && column.type === "jsonb")) return TRUE | FALSE;
        return (value === null) === wantNull ? TRUE : FALSE;
      };
    }
    if (op === "not" && isPlainObject(operand)) return negate(this.column(name, operand));
    const text = (row: Row) => canonical(this.kind, column, read(row));
    switch (op) {
      case "equals":
      case "not": {
        const wanted = canonical(this.kind, column, operand);
        if (typeof wanted !== "string") return () => ANY;
        const hit = op === "equals" ? TRUE : FALSE;
        return (row) => compared(text(row), (got) => (got === wanted ? hit : TRUE + FALSE - hit));
      }
      case "in":
      case "notIn": {
        const list = (operand as unknown[]).map((item) => canonical(this.kind, column, item));
        // As compiled: an empty list is a constant, whatever the column holds.
        if (list.length === 0) return () => (op === "in" ? FALSE : TRUE);
        if (list.some((item) => typeof item !== "string")) return () => ANY;
        const set = new Set(list as string[]);
        const hit = op === "in" ? TRUE : FALSE;
        return (row) => compared(text(row), (got) => (set.has(got) ? hit : TRUE + FALSE - hit));
      }
      case "lt":
      case "lte":
      case "gt":
      case "gte": {
        const wanted = INTEGERS.has(column.type) ? canonical(this.kind, column, operand) : undefined;
        if (typeof wanted !== "string") return () => ANY;
        const bound = BigInt(wanted);
        const holds = { lt: (n: bigint) => n < bound, lte: (n: bigint) => n <= bound, gt: (n: bigint) => n > bound, gte: (n: bigint) => n >= bound }[op];
        return (row) => compared(text(row), (got) => (holds(BigInt(got)) ? TRUE : FALSE));
      }
      case "contains":
      case "startsWith":
      case "endsWith": {
        // Literal, case-sensitive matching on both families (LIKE with escapes, GLOB with brackets).
        const needle = operand as string;
        const holds = op === "contains" ? (s: string) => s.includes(needle) : op === "startsWith" ? (s: string) => s.startsWith(needle) : (s: string) => s.endsWith(needle);
        return (row) => compared(text(row), (got) => (holds(got) ? TRUE : FALSE));
      }
      default:
        return () => ANY;
    }
  }
}

/** A comparison's outcomes: NULL against a NULL column, every outcome when the value is unknown. */
function compared(value: string | null | undefined, decide: (value: string) => Outcomes): Outcomes {
  if (value === undefined) return ANY;
  if (value === null) return NULL;
  return decide(value);
}

function negate(test: Test): Test {
  return (row) => {
    const outcomes = test(row);
    return (outcomes & TRUE ? FALSE : 0) | (outcomes & FALSE ? TRUE : 0) | (outcomes & NULL);
  };
}

/** Kleene AND over outcome sets: false if any part may be false, true only if every part may be. */
function all(parts: Test[]): Test {
  if (parts.length === 0) return () => TRUE;
  if (parts.length === 1) return parts[0]!;
  return (row) => {
    let acc = TRUE;
    for (const part of parts) {
      const next = part(row);
      acc = (acc & FALSE || next & FALSE ? FALSE : 0) | (acc & TRUE && next & TRUE ? TRUE : 0) | ((acc & NULL && next & (TRUE | NULL)) || (next & NULL && acc & (TRUE | NULL)) ? NULL : 0);
    }
    return acc;
  };
}

/** Kleene OR over outcome sets. */
function any(parts: Test[]): Test {
  if (parts.length === 0) return () => FALSE;
  if (parts.length === 1) return parts[0]!;
  return (row) => {
    let acc = FALSE;
    for (const part of parts) {
      const next = part(row);
      acc = (acc & TRUE || next & TRUE ? TRUE : 0) | (acc & FALSE && next & FALSE ? FALSE : 0) | ((acc & NULL && next & (FALSE | NULL)) || (next & NULL && acc & (FALSE | NULL)) ? NULL : 0);
    }
    return acc;
  };
}
