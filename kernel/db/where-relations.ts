import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { RelationModel, SchemaModel, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { WhereError, isPlainObject } from "./query-error.js";
import type { QueryBudget } from "./query-limits.js";
import { isMany } from "./relations.js";

/**
 * Relation filters: `{ comments: { some: { body: { contains: "x" } } } }` on a hasMany or
 * manyToMany relation (`some`, `every`, `none`), `{ author: { is: { name: "Ada" } } }` on a
 * belongsTo or hasOne (`is`, `isNot`, either also `null`). Each compiles to one correlated
 * `EXISTS` subquery over the related table (joined through the pivot for manyToMany), with the
 * nested `where` compiled strictly against that table (its columns, operators and relations), so
 * its values are parameters like any other.
 *
 * - `some: W`: a related row matches W; `none: W`: none does; `every: W`: none fails W (a row
 *   where W is unknown, a NULL comparison, fails it), so `every` holds when there is no related row.
 * - `is: W`: the related row exists and matches W; `isNot: W`: no related row matching W (true
 *   when there is none); `is: null`: no related row; `isNot: null`: one exists.
 * - With a `related` scope, only the related rows the caller may see take part, in every operator:
 *   the scope is ANDed inside the subquery, so `every` and `none` ignore rows hidden from the
 *   caller rather than failing on them, and no operator tells a hidden row from a missing one.
 */

/** The condition rows of each table must meet inside relation filters, by table; `true`: every row. */
export type RelationScopes = Readonly<Record<string, Record<string, unknown> | true>>;

export type Predicate = RawBuilder<SqlBool> | boolean;

/** What the where compiler hands over for one relation filter. */
export interface RelationContext {
  budget: QueryBudget;
  related?: RelationScopes;
  tables?: Set<string>;
  depth?: number;
  /** The argument the `where` came in, for the budget's messages. */
  root: string;
  /** The alias (or table name) of the row the relation starts from. */
  outer: string;
  compile(kind: DatabaseKind, table: TableModel, where: unknown, options: Record<string, unknown>): Predicate;
  all(parts: Predicate[]): Predicate;
}

const MANY = ["some", "every", "none"] as const;
const ONE = ["is", "isNot"] as const;

export function relationFilter(kind: DatabaseKind, model: SchemaModel, relation: RelationModel, value: unknown, path: string, context: RelationContext): Predicate {
  const allowed: readonly string[] = isMany(relation) ? MANY : ONE;
  const use = `use ${allowed.join(", ")}`;
  if (!isPlainObject(value)) throw new WhereError(path, `"${relation.name}" is a ${relation.kind} relation: expected { ${allowed.join(" | ")}: { ... } } (${use})`);
  const parts: Predicate[] = [];
  for (const [op, operand] of Object.entries(value)) {
    if (operand === undefined) continue;
    const at = `${path}.${op}`;
    if (!allowed.includes(op)) throw new WhereError(at, `unknown relation operator "${op}" on ${relation.kind} relation "${relation.name}" (${use})`);
    if (operand !== null && !isPlainObject(operand)) throw new WhereError(at, `expected a where object for table "${relation.target}"${isMany(relation) ? "" : " or null"}`);
    if (operand === null && isMany(relation)) throw new WhereError(at, "expected a where object (null applies to is and isNot)");
    parts.push(one(kind, model, relation, op, operand, at, context));
  }
  return context.all(parts);
}

function one(kind: DatabaseKind, model: SchemaModel, relation: RelationModel, op: string, operand: Record<string, unknown> | null, path: string, context: RelationContext): Predicate {
  const depth = (context.depth ?? 0) + 1;
  const alias = `__r${context.budget.relation(path, context.root, depth)}`;
  const target = model.tables[relation.target]!;
  const scope = context.related ? context.related[relation.target] : true;
  if (scope === undefined) throw new WhereError(path, `relation filters cannot reach table "${relation.target}"`);
  context.tables?.add(relation.target);
  if (relation.via) context.tables?.add(relation.via);
  const nested = { budget: context.budget, model, tables: context.tables, qualifier: alias, depth };
  // The caller's where is scoped all the way down; the scope itself is trusted (a rule's own where).
  const inner = operand === null ? true : context.compile(kind, target, operand, { ...nested, related: context.related, path });
  const visible = scope === true ? true : context.compile(kind, target, scope, { ...nested, path: `${path} (the list rule of "${relation.target}")` });
  const { from, link } = source(relation, alias, context.outer);
  const exists = (condition: Predicate): Predicate => {
    const where = context.all([link, visible, condition]);
    if (where === false) return false;
    return sql<SqlBool>`exists (select 1 ${from} where ${where === true ? sql`1 = 1` : where})`;
  };
  const not = (p: Predicate): Predicate => (typeof p === "boolean" ? !p : sql<SqlBool>`not ${p}`);
  switch (op) {
    case "some":
      return exists(inner);
    case "none":
      return not(exists(inner));
    case "every":
      // Unknown is failure: `not coalesce(W, false)` keeps rows where W is NULL in the failures.
      return inner === true ? true : not(exists(inner === false ? true : sql<SqlBool>`not coalesce(${inner}, false)`));
    case "is":
      return operand === null ? not(exists(true)) : exists(inner);
    default:
      return operand === null ? exists(true) : not(exists(inner));
  }
}

/** `from <target> as <alias> [join <pivot>]` and the condition tying it to the outer row. */
function source(relation: RelationModel, alias: string, outer: string): { from: RawBuilder<unknown>; link: RawBuilder<SqlBool> } {
  const target = sql`from ${sql.id(relation.target)} as ${sql.id(alias)}`;
  if (!relation.via) return { from: target, link: sql<SqlBool>`${sql.id(alias, relation.to)} = ${sql.id(outer, relation.from)}` };
  const pivot = `${alias}v`;
  return {
    from: sql`${target} inner join ${sql.id(relation.via)} as ${sql.id(pivot)} on ${sql.id(pivot, relation.pivotTo!)} = ${sql.id(alias, relation.to)}`,
    link: sql<SqlBool>`${sql.id(pivot, relation.pivotFrom!)} = ${sql.id(outer, relation.from)}`,
  };
}
