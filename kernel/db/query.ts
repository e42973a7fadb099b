import { sql, type Kysely, type Selectable } from "kysely";
import type { SchemaModel, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../resources.js";
import { findManyPostgres } from "./find-postgres.js";
import { findManySqlite } from "./find-sqlite.js";
import { planFind } from "./query-args.js";
import type { Where } from "./where.js";

/**
 * `db.query.<table>`: relational reads over the schema model. Arguments are validated against the
 * schema (unknown columns, operators and relations throw `QueryError`/`WhereError`, status 400),
 * values are always bound parameters, rows come back in the SPEC select types on every family.
 *
 * - `orderBy` is `[{ column: "asc" | "desc" }, ...]`; the primary key is appended as a tie-breaker
 *   (and is the whole order when none is given) so `skip`/`take` pages are stable.
 * - `include: { relation: true }` adds hasMany/manyToMany as arrays and belongsTo/hasOne as an object
 *   or null; a relation not asked for has no key. Postgres answers in one statement returning one
 *   JSON document, SQLite with one batched statement per relation; never one per row. At most
 *   INCLUDE_LIMIT (1000) related rows per parent and relation.
 */

export type OrderBy<Row> = ReadonlyArray<{ readonly [K in keyof Row]?: "asc" | "desc" }>;

export interface FindManyArgs<Row, I extends Include = Include> {
  where?: Where;
  orderBy?: OrderBy<Row>;
  take?: number;
  skip?: number;
  include?: I;
}

export type Include = Readonly<Record<string, boolean | undefined>>;

/** A row plus the relations asked for. Their shape depends on the relation, so it is `unknown` here. */
export type WithIncluded<Row, I> = Row & { [K in keyof I as I[K] extends true ? K : never]: unknown };

export interface TableQuery<Row> {
  findMany<const I extends Include = {}>(args?: FindManyArgs<Row, I>): Promise<WithIncluded<Row, I>[]>;
  findFirst<const I extends Include = {}>(args?: FindManyArgs<Row, I>): Promise<WithIncluded<Row, I> | null>;
  count(args?: { where?: Where }): Promise<number>;
}

/** `query` typed from a Kysely database type (`KyselyDatabase<typeof v1>`): one entry per table. */
export type QueryApi<DB> = { readonly [T in keyof DB & string]: TableQuery<Selectable<DB[T]>> };

const COUNT_KEYS = new Set(["where"]);

export function createQueryApi<DB = any>(db: Kysely<any>, kind: DatabaseKind, model: SchemaModel): QueryApi<DB> {
  const api: Record<string, TableQuery<any>> = {};
  for (const table of Object.values(model.tables)) api[table.name] = tableQuery(db, kind, model, table);
  return Object.freeze(api) as QueryApi<DB>;
}

function tableQuery(db: Kysely<any>, kind: DatabaseKind, model: SchemaModel, table: TableModel): TableQuery<any> {
  const findMany = async (args?: unknown): Promise<any[]> => {
    const plan = planFind(kind, model, table, args);
    return kind === "postgres" ? findManyPostgres(db, model, table, plan) : findManySqlite(db, model, table, plan);
  };
  return Object.freeze({
    findMany,
    async findFirst(args?: unknown) {
      const rows = await findMany({ ...(args as object), take: 1 });
      return rows[0] ?? null;
    },
    async count(args?: unknown) {
      const plan = planFind(kind, model, table, args, COUNT_KEYS);
      const where = plan.where ? sql` where ${plan.where}` : sql``;
      const { rows } = await sql<{ count: unknown }>`select count(*) as "count" from ${sql.id(table.name)}${where}`.execute(db);
      // Postgres' count is a bigint (a string through pg); a count fits a JS number.
      return Number(rows[0]?.count ?? 0);
    },
  });
}
