import { WhereError, isPlainObject } from "./query-error.js";
import type { SchemaModel } from "../schema/model.js";

/**
 * The one walk over the boolean shape of `where`. The compiler folds it into SQL; every check that
 * refuses a column (the file storage key, the admin API's secret columns) reads the columns it
 * yields. One walk means a check can never miss a form the compiler accepts: `AND`/`OR` as an
 * array or one object, `NOT` as an object or an array, nested in any order to `MAX_WHERE_DEPTH`.
 */

/** Deeper nesting is refused: the compiler recurses once per level. */
export const MAX_WHERE_DEPTH = 32;

/** How each boolean form folds. `none` is `NOT`: none of its parts may match. */
export interface WhereFold<T> {
  column(name: string, value: unknown, path: string): T;
  and(parts: T[]): T;
  or(parts: T[]): T;
  none(parts: T[]): T;
}

/**
 * Folds `where` (a plain object) with `fold`, depth first, in key order. Throws `WhereError` for a
 * node that is not a plain object and for nesting deeper than `MAX_WHERE_DEPTH`. Keys `AND`, `OR`
 * and `NOT` are always logical; an `undefined` value is skipped, as JSON would drop it.
 */
export function foldWhere<T>(where: unknown, fold: WhereFold<T>, path = "where"): T {
  return node(where, fold, path, 0);
}

function node<T>(where: unknown, fold: WhereFold<T>, path: string, depth: number): T {
  if (!isPlainObject(where)) throw new WhereError(path, "expected an object of columns and operators");
  if (depth > MAX_WHERE_DEPTH) throw new WhereError(path, `nested more than ${MAX_WHERE_DEPTH} levels deep`);
  const parts: T[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    const at = `${path}.${key}`;
    if (key === "AND") parts.push(fold.and(list(value, fold, at, depth)));
    else if (key === "OR") parts.push(fold.or(list(value, fold, at, depth)));
    else if (key === "NOT") parts.push(fold.none(list(value, fold, at, depth)));
    else parts.push(fold.column(key, value, at));
  }
  return fold.and(parts);
}

function list<T>(value: unknown, fold: WhereFold<T>, path: string, depth: number): T[] {
  if (Array.isArray(value)) return value.map((item, i) => node(item, fold, `${path}[${i}]`, depth + 1));
  return [node(value, fold, path, depth + 1)];
}

/** A column `where` names, and where (`where.OR[0].NOT[1].key`). */
export interface WhereColumn {
  readonly name: string;
  readonly path: string;
}

/** Every column `where` names, at any depth of any boolean form; none for an absent `where`. */
export function whereColumns(where: unknown, path = "where"): WhereColumn[] {
  if (where === undefined || where === null) return [];
  const found: WhereColumn[] = [];
  const ignore = () => undefined;
  foldWhere<void>(where, { column: (name, _value, at) => void found.push({ name, path: at }), and: ignore, or: ignore, none: ignore }, path);
  return found;
}

/** A relation filter `where` holds: the table it starts from, the relation's name and target. */
export interface WhereRelation {
  readonly table: string;
  readonly relation: string;
  readonly target: string;
  readonly path: string;
}

const RELATION_OPERATORS = new Set(["some", "every", "none", "is", "isNot"]);

/**
 * Every relation filter in `where` on `table`, nested ones too (what a permission layer scopes
 * before the query runs). Shapes the compiler refuses are skipped here: it reports them.
 */
export function whereRelations(model: SchemaModel, table: string, where: unknown, path = "where"): WhereRelation[] {
  if (where === undefined || where === null) return [];
  const found: WhereRelation[] = [];
  const ignore = () => undefined;
  const relations = model.relations[table] ?? {};
  const column = (name: string, value: unknown, at: string) => {
    const relation = Object.hasOwn(relations, name) && !Object.hasOwn(model.tables[table]?.columns ?? {}, name) ? relations[name] : undefined;
    if (!relation || !isPlainObject(value)) return;
    found.push({ table, relation: name, target: relation.target, path: at });
    for (const [op, operand] of Object.entries(value)) {
      if (RELATION_OPERATORS.has(op) && isPlainObject(operand)) found.push(...whereRelations(model, relation.target, operand, `${at}.${op}`));
    }
  };
  foldWhere<void>(where, { column, and: ignore, or: ignore, none: ignore }, path);
  return found;
}
