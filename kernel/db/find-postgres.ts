import { sql, type Kysely, type RawBuilder } from "kysely";
import { primaryKeyOf, type RelationModel, type SchemaModel, type TableModel } from "../schema/model.js";
import { tupleDecoder } from "./decode.js";
import { jsonArray, jsonColumnValues, readJsonArray } from "./json-tuple.js";
import type { FindPlan, IncludePlan } from "./query-args.js";
import { INCLUDE_LIMIT, RELATED, isMany } from "./relations.js";
import { orderByList } from "./select-sql.js";
import { DISTANCE } from "./nearest.js";
import { rankFirst } from "./search-sql.js";

/**
 * `findMany` on Postgres as ONE statement returning ONE JSON document, whatever it includes.
 *
 * The page of parent rows is a derived table; each row becomes a JSON array of its column values
 * followed by one value per included relation, computed by a correlated subquery (an array of
 * arrays for hasMany/manyToMany, an array or null for belongsTo/hasOne); `json_agg` folds the page
 * into a single value. Measured on PGlite (test/bench/query.ts), a statement's fixed cost and the
 * per-field parsing of result rows dominate, and one JSON value that `JSON.parse` reads natively
 * costs about the same as the bare page, so including relations is nearly free. Positional arrays
 * instead of objects keep the document small. Values the JSON form would lose (bigint, numeric) are
 * cast to text (json-tuple.ts); the tuples are decoded back to the in-process types (decode.ts).
 */

const PARENT = "__p";
const TARGET = RELATED;
const PIVOT = "__v";

type Row = Record<string, unknown>;

/** The one statement of a `findMany` (what `compile()` shows and live providers watch). */
export function findManyPostgresStatement(model: SchemaModel, table: TableModel, plan: FindPlan): RawBuilder<{ rows: unknown }> {
  const values = [...jsonColumnValues(table, PARENT), ...plan.include.map((include) => relationValue(model, include))];
  if (plan.nearest) values.push(sql.id(PARENT, DISTANCE));
  const order = plan.nearest
    ? sql` order by ${sql.id(PARENT, DISTANCE)}`
    : plan.ordering.length > 0
      ? sql` order by ${rankFirst(plan, PARENT, orderByList("postgres", table, PARENT, plan.ordering))}`
      : sql``;
  return sql<{ rows: unknown }>`select coalesce(json_agg(${jsonArray(values)}${order}), '[]') as "rows" from (${pageOf(table, plan)}) as ${sql.id(PARENT)}`;
}

export async function findManyPostgres(db: Kysely<any>, model: SchemaModel, table: TableModel, plan: FindPlan): Promise<Row[]> {
  return (await findTuplesPostgres(db, model, table, plan)).rows;
}

/** `findManyPostgres`, with each row's tuple as PostgreSQL wrote it (for exact cursors, cursor.ts). */
export async function findTuplesPostgres(db: Kysely<any>, model: SchemaModel, table: TableModel, plan: FindPlan): Promise<{ rows: Row[]; tuples: unknown[][] }> {
  const { rows } = await findManyPostgresStatement(model, table, plan).execute(db);
  let document = rows[0]?.rows ?? [];
  // pg and PGlite parse json already; a dialect with that parser switched off hands over text.
  if (typeof document === "string") document = JSON.parse(document);

  const width = Object.keys(table.columns).length;
  const decodeParent = tupleDecoder("postgres", table);
  const relations = plan.include.map(({ relation }) => {
    const target = model.tables[relation.target]!;
    const decode = tupleDecoder("postgres", target);
    const size = Object.keys(target.columns).length;
    return { name: relation.name, many: isMany(relation), read: (raw: unknown[]) => decode(readJsonArray(raw, size)) };
  });
  const distance = plan.nearest ? width + relations.length : -1;
  const tuples = (document as unknown[][]).map((raw) => readJsonArray(raw, width + relations.length + (plan.nearest ? 1 : 0)));
  const decoded = tuples.map((tuple) => {
    const row = decodeParent(tuple);
    relations.forEach(({ name, many, read }, i) => {
      const value = tuple[width + i] as unknown[] | null;
      row[name] = many ? (value as unknown[][]).map(read) : value === null ? null : read(value);
    });
    if (distance >= 0) row[DISTANCE] = Number(tuple[distance]);
    return row;
  });
  return { rows: decoded, tuples };
}

/** The parent page: filtered, ordered and limited before any relation is computed. */
function pageOf(table: TableModel, plan: FindPlan): RawBuilder<unknown> {
  const where = plan.where ? sql` where ${plan.where}` : sql``;
  // Ordered by the distance expression alone: the form an HNSW index scan answers.
  const distance = plan.nearest ? sql`, ${plan.nearest.distance(table.name)} as ${sql.id(DISTANCE)}` : sql``;
  const order = plan.nearest
    ? sql` order by ${sql.id(DISTANCE)}`
    : plan.ordering.length > 0
      ? sql` order by ${rankFirst(plan, table.name, orderByList("postgres", table, table.name, plan.ordering))}`
      : sql``;
  const limit = plan.take !== undefined ? sql` limit ${plan.take}` : sql``;
  const offset = plan.skip ? sql` offset ${plan.skip}` : sql``;
  return sql`select *${distance} from ${sql.id(table.name)}${where}${order}${limit}${offset}`;
}

/**
 * The related rows of the current parent row: an array of tuples (many) or one tuple or null. An
 * include's own `where` is ANDed into the same correlated subquery, so filtering costs no statement.
 */
function relationValue(model: SchemaModel, { relation, where }: IncludePlan): RawBuilder<unknown> {
  const target = model.tables[relation.target]!;
  const key = primaryKeyOf(target);
  const order = key ? sql` order by ${sql.id(TARGET, key)}` : sql``;
  const source = where ? sql`${relatedRows(relation)} and ${where}` : relatedRows(relation);
  const tuple = jsonArray(jsonColumnValues(target, TARGET));
  if (!isMany(relation)) return sql`(select ${tuple} ${source}${order} limit 1)`;
  const ordinal = key ? sql.id(TARGET, key) : sql`1`;
  const inner = sql`select ${tuple} as "__j", ${ordinal} as "__o" ${source}${order} limit ${sql.lit(INCLUDE_LIMIT)}`;
  return sql`(select coalesce(json_agg("__s"."__j" order by "__s"."__o"), '[]') from (${inner}) as "__s")`;
}

/** `from ... where ...` of the rows related to the parent row `__p`. */
function relatedRows(relation: RelationModel): RawBuilder<unknown> {
  const target = sql`${sql.id(relation.target)} as ${sql.id(TARGET)}`;
  if (relation.kind !== "manyToMany") {
    return sql`from ${target} where ${sql.id(TARGET, relation.to)} = ${sql.id(PARENT, relation.from)}`;
  }
  const pivot = sql`${sql.id(relation.via!)} as ${sql.id(PIVOT)}`;
  return sql`from ${target} inner join ${pivot} on ${sql.id(PIVOT, relation.pivotTo!)} = ${sql.id(TARGET, relation.to)} where ${sql.id(PIVOT, relation.pivotFrom!)} = ${sql.id(PARENT, relation.from)}`;
}
