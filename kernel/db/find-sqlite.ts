import { sql, type Kysely, type RawBuilder } from "kysely";
import { primaryKeyOf, type ColumnModel, type SchemaModel, type TableModel } from "../schema/model.js";
import { decodeValue, rowDecoder } from "./decode.js";
import type { FindPlan, IncludePlan } from "./query-args.js";
import { INCLUDE_LIMIT, RELATED, isMany } from "./relations.js";
import { columnValue, orderByList, selectList } from "./select-sql.js";
import { rankFirst } from "./search-sql.js";
import { encodeValue } from "./values.js";

/**
 * `findMany` on SQLite: the parent page, then ONE statement per included relation for all parents
 * at once (never one per row). SQLite statements are cheap in-process calls, so batching is as fast
 * as a JSON aggregate and keeps decoding simple. The keys travel as one JSON array parameter read
 * with `json_each`, so any page size stays within SQLite's bound-parameter limit; a window function
 * caps the rows per parent at INCLUDE_LIMIT inside the same statement.
 */

const TARGET = RELATED;
const PIVOT = "__v";
const KEY = "__trellis_key";
const RANK = "__trellis_rank";

type Row = Record<string, unknown>;

/** The parent page's statement (each included relation is one more batched statement). */
export function findManySqliteStatement(table: TableModel, plan: FindPlan): RawBuilder<Row> {
  const where = plan.where ? sql` where ${plan.where}` : sql``;
  const order = plan.ordering.length > 0 ? sql` order by ${rankFirst(plan, table.name, orderByList("sqlite", table, table.name, plan.ordering))}` : sql``;
  // SQLite has no OFFSET without LIMIT; -1 means no limit.
  const limit = plan.take !== undefined ? sql` limit ${plan.take}` : plan.skip ? sql` limit -1` : sql``;
  const offset = plan.skip ? sql` offset ${plan.skip}` : sql``;
  return sql<Row>`select ${selectList("sqlite", table, table.name)} from ${sql.id(table.name)}${where}${order}${limit}${offset}`;
}

export async function findManySqlite(db: Kysely<any>, model: SchemaModel, table: TableModel, plan: FindPlan): Promise<Row[]> {
  return (await findTuplesSqlite(db, model, table, plan, false)).rows;
}

/**
 * `findManySqlite`, with each row's tuple as SQLite stored it (column values in model order, for
 * exact cursors, cursor.ts): a timestamp another writer stored as `2024-01-02 03:04:05` sorts by
 * that text, not by the ISO text of its instant.
 */
export async function findTuplesSqlite(db: Kysely<any>, model: SchemaModel, table: TableModel, plan: FindPlan, stored = true): Promise<{ rows: Row[]; tuples: unknown[][] }> {
  const raw = (await findManySqliteStatement(table, plan).execute(db)).rows;
  const columns = stored ? Object.keys(table.columns) : [];
  // Read before decoding, which replaces the values in place.
  const tuples = stored ? raw.map((row) => columns.map((column) => row[column])) : [];
  const rows = raw.map(rowDecoder("sqlite", table));
  for (const include of plan.include) await attach(db, model, table, include, rows);
  return { rows, tuples };
}

async function attach(db: Kysely<any>, model: SchemaModel, table: TableModel, include: IncludePlan, rows: Row[]): Promise<void> {
  const { relation } = include;
  const fromColumn = table.columns[relation.from]!;
  const keys = new Map<string, string>();
  for (const row of rows) {
    const value = row[relation.from];
    if (value !== null && value !== undefined) keys.set(keyOf(value), jsonKey(fromColumn, value));
  }
  const groups = new Map<string, Row[]>();
  if (keys.size > 0) {
    const target = model.tables[relation.target]!;
    const keyColumn = relation.kind === "manyToMany" ? model.tables[relation.via!]!.columns[relation.pivotFrom!]! : target.columns[relation.to]!;
    const { rows: related } = await relatedRows(model, include, `[${[...keys.values()].join(",")}]`).execute(db);
    const decode = rowDecoder("sqlite", target);
    for (const raw of related) {
      const key = keyOf(decodeValue("sqlite", keyColumn, raw[KEY]));
      delete raw[KEY];
      delete raw[RANK];
      const group = groups.get(key);
      if (group) group.push(decode(raw));
      else groups.set(key, [decode(raw)]);
    }
  }
  const many = isMany(relation);
  for (const row of rows) {
    const value = row[relation.from];
    const group = value === null || value === undefined ? undefined : groups.get(keyOf(value));
    row[relation.name] = many ? (group ?? []) : (group?.[0] ?? null);
  }
}

/**
 * The related rows of every key in `keysJson`, each tagged with its key, capped per key. An
 * include's own `where` is ANDed in before the cap, in the same statement.
 */
function relatedRows(model: SchemaModel, { relation, where }: IncludePlan, keysJson: string): RawBuilder<Row> {
  const target = model.tables[relation.target]!;
  const pk = primaryKeyOf(target);
  const m2m = relation.kind === "manyToMany";
  const keyRef = m2m ? sql.id(PIVOT, relation.pivotFrom!) : sql.id(TARGET, relation.to);
  const keyColumn = m2m ? model.tables[relation.via!]!.columns[relation.pivotFrom!]! : target.columns[relation.to]!;
  const keyValue = columnValue("sqlite", m2m ? PIVOT : TARGET, m2m ? relation.pivotFrom! : relation.to, keyColumn);
  const join = m2m
    ? sql` inner join ${sql.id(relation.via!)} as ${sql.id(PIVOT)} on ${sql.id(PIVOT, relation.pivotTo!)} = ${sql.id(TARGET, relation.to)}`
    : sql``;
  const rank = sql`row_number() over (partition by ${keyRef}${pk ? sql` order by ${sql.id(TARGET, pk)}` : sql``})`;
  const cap = isMany(relation) ? INCLUDE_LIMIT : 1;
  const inner = sql`select ${selectList("sqlite", target, TARGET)}, ${keyValue} as ${sql.id(KEY)}, ${rank} as ${sql.id(RANK)} from ${sql.id(relation.target)} as ${sql.id(TARGET)}${join} where ${keyRef} in (select value from json_each(${keysJson}))${where ? sql` and ${where}` : sql``}`;
  return sql<Row>`select * from (${inner}) where ${sql.id(RANK)} <= ${sql.lit(cap)} order by ${sql.id(RANK)}`;
}

/** One spelling per key value, so a parent's key finds its group whatever the two columns' types. */
function keyOf(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** The key as a JSON array element that `json_each` yields with the stored type (64-bit exact). */
function jsonKey(column: ColumnModel, value: unknown): string {
  const bound = encodeValue("sqlite", column, value);
  if (typeof bound === "number" || typeof bound === "bigint") return String(bound);
  if (typeof bound === "string") return JSON.stringify(bound);
  throw new TypeError(`A relation on a ${column.type} column cannot be included`);
}
