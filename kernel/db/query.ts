import { sql, type Kysely, type RawBuilder, type Selectable, type SqlBool } from "kysely";
import type { SchemaModel, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { findManyPostgres, findManyPostgresStatement, findTuplesPostgres } from "./find-postgres.js";
import { findManySqlite, findManySqliteStatement, findTuplesSqlite } from "./find-sqlite.js";
import { RANK_NOT_PAGED, planFind } from "./query-args.js";
import { QueryError } from "./query-error.js";
import { cursorOf } from "./cursor.js";
import { compileWhere, type Where } from "./where.js";
import type { LiveHub } from "./live.js";
import { liveFilter, liveTable } from "./live-match.js";
import { DEFAULT_QUERY_LIMITS, QueryBudget, type QueryLimits } from "./query-limits.js";

/**
 * `db.query.<table>`: relational reads over the schema model. Arguments are validated against the
 * schema (unknown columns, operators and relations throw `QueryError`/`WhereError`, status 400),
 * values are always bound parameters, rows come back in the SPEC select types on every family.
 *
 * - `orderBy` is `[{ column: "asc" | "desc" }, ...]`; the primary key is appended as a tie-breaker
 *   (and is the whole order when none is given) so `skip`/`take` pages are stable.
 * - `include: { relation: true }` adds hasMany/manyToMany as arrays and belongsTo/hasOne as an object
 *   or null; a relation not asked for has no key. `include: { relation: { where } }` includes only the
 *   related rows matching `where` (the target table's where language), in the same statement. Postgres answers in one statement returning one
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
  /** The `nextCursor` of a previous page: only rows after it (keyset, same `orderBy` required). */
  after?: string;
  /**
   * Words to find in the table's full-text index (`.search()` in the schema): rows holding every
   * word, best match first unless `orderBy` is given. Never a query language: anything but letters
   * and digits separates words. At most 500 characters; no word at all matches every row.
   */
  search?: string;
  /** The k rows nearest a vector, nearest first, each with `_distance` (nearest.ts). */
  nearest?: { column: string; vector: readonly number[]; k: number };
  /** The rules the read runs under, kept apart from the caller's `where` (see `QueryScope`). */
  scope?: QueryScope;
}

/**
 * What a permission layer adds to a caller's query (the resources plugin passes its rules here).
 * Kept apart from `where` because it is trusted: relation filters inside `scope.where` read every
 * related row, while those of the caller's `where` read only what `related` allows.
 */
export interface QueryScope {
  /** ANDed to `where` in the same statement (a list rule, the owner condition). */
  where?: Where;
  /**
   * The tables the caller's relation filters may reach, each with the condition its rows must meet
   * inside them (`true`: every row). A relation filter reaching a table not listed is 400. Absent:
   * relation filters read every related row.
   */
  related?: Readonly<Record<string, Where | true>>;
}

/** One page of `findPage`: `nextCursor` is null on the last page. */
export interface Page<Row> {
  items: Row[];
  nextCursor: string | null;
}

/** What to include of one relation: all its rows (`true`), or only those matching `where`. */
export type IncludeArgs = true | false | undefined | { readonly where?: Where };

export type Include = Readonly<Record<string, IncludeArgs>>;

/** A row plus the relations asked for. Their shape depends on the relation, so it is `unknown` here. */
export type WithIncluded<Row, I> = Row & { [K in keyof I as I[K] extends true | { readonly where?: Where } ? K : never]: unknown };

export interface TableQuery<Row> {
  findMany<const I extends Include = {}>(args?: FindManyArgs<Row, I>): Promise<WithIncluded<Row, I>[]>;
  findFirst<const I extends Include = {}>(args?: FindManyArgs<Row, I>): Promise<WithIncluded<Row, I> | null>;
  count(args?: { where?: Where; search?: string; scope?: QueryScope }): Promise<number>;
  /**
   * `where` compiled for this table's own statements, relation filters included (validated like
   * `findMany`'s, 400 on a bad one): `db.updateTable("post").set(...).where(db.query.post.predicate(w))`.
   * Undefined when `where` constrains nothing.
   */
  predicate(where: Where | undefined): RawBuilder<SqlBool> | undefined;
  /**
   * `findMany(args)` as a keyset page: `{ items, nextCursor }`, where `nextCursor` (null on the last
   * page) passed as `after` with the same `where` and `orderBy` gives the next page. Pages stay
   * stable while rows are inserted and deleted, and cost the same at any depth.
   */
  findPage<const I extends Include = {}>(args?: FindManyArgs<Row, I>): Promise<Page<WithIncluded<Row, I>>>;
  /**
   * The SQL and parameters `findMany(args)` would run, validated the same way, without running it.
   * On PostgreSQL it is the whole query, includes too; on SQLite the parent page (each include is
   * one more batched statement).
   */
  compile(args?: FindManyArgs<Row, Include>): CompiledFind;
  /**
   * `findMany(args)` as a stream of full snapshots: the first at once, then one after each committed
   * change that alters the result (coalesced: a slow reader gets the newest, never a backlog).
   * Identical subscriptions share one query. Ends on `signal` abort, `return()` and `close()`.
   */
  live<const I extends Include = {}>(args?: FindManyArgs<Row, I>, options?: { signal?: AbortSignal }): AsyncIterableIterator<WithIncluded<Row, I>[]>;
}

export interface CompiledFind {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * `query` typed from a Kysely database type (`KyselyDatabase<typeof v1>`): one entry per table. An
 * `App`'s context types it from the schema instead (`QueryOf`).
 */
export type QueryApi<DB> = { readonly [T in keyof DB & string]: TableQuery<Selectable<DB[T]>> };

const COUNT_KEYS = new Set(["where", "search", "scope"]);

export function createQueryApi<DB = any>(
  db: Kysely<any>,
  kind: DatabaseKind,
  model: SchemaModel,
  hub?: LiveHub,
  limits: Required<QueryLimits> = DEFAULT_QUERY_LIMITS,
): QueryApi<DB> {
  const api: Record<string, TableQuery<any>> = {};
  for (const table of Object.values(model.tables)) api[table.name] = tableQuery(db, kind, model, table, hub, limits);
  return Object.freeze(api) as QueryApi<DB>;
}

function tableQuery(db: Kysely<any>, kind: DatabaseKind, model: SchemaModel, table: TableModel, hub: LiveHub | undefined, limits: Required<QueryLimits>): TableQuery<any> {
  // How a live query reads written rows of this table (its key and comparable values), when it can.
  const rows = hub && liveTable(kind, table);
  const plan = (args: unknown, allowed?: ReadonlySet<string>) => planFind(kind, model, table, args, allowed as Set<string> | undefined, limits);
  const findMany = async (args?: unknown): Promise<any[]> => {
    const found = plan(args);
    return kind === "postgres" ? findManyPostgres(db, model, table, found) : findManySqlite(db, model, table, found);
  };
  return Object.freeze({
    findMany,
    async findFirst(args?: unknown) {
      const rows = await findMany({ ...(args as object), take: 1 });
      return rows[0] ?? null;
    },
    live(args?: unknown, options?: { signal?: AbortSignal }) {
      if (!hub) throw new Error("Live queries need the app's database (context.db or built.db)");
      // Validated now, so a bad argument throws at the call rather than inside the stream.
      const checked = plan(args);
      const tables = [...new Set([table.name, ...checked.include.flatMap(({ relation }) => (relation.via ? [relation.target, relation.via] : [relation.target])), ...checked.related])];
      // Relation filters make other tables' writes matter: those re-run the query, unfiltered.
      const given = (args ?? {}) as Record<string, unknown>;
      const scoped = (given.scope as QueryScope | undefined)?.where;
      const filter = rows && checked.related.length === 0 ? liveFilter(kind, rows, table, scoped ? { ...given, where: given.where ? { AND: [given.where, scoped] } : scoped } : given) : undefined;
      // A bigint value (a bigint column's filter) keys as its digits, the text the column also accepts.
      const key = JSON.stringify(args ?? {}, (_, value) => (typeof value === "bigint" ? value.toString() : value));
      return hub.subscribe(`${table.name}\u0000${key}`, tables, () => findMany(args), options?.signal, filter);
    },
    compile(args?: unknown): CompiledFind {
      const checked = plan(args);
      const statement = kind === "postgres" ? findManyPostgresStatement(model, table, checked) : findManySqliteStatement(table, checked);
      const { sql: text, parameters } = statement.compile(db);
      return { sql: text, parameters };
    },
    async findPage(args?: unknown) {
      const checked = plan(args);
      if (checked.nearest) throw new QueryError("nearest", "a nearest search answers its k rows at once: list it (findMany), it has no pages");
      if (checked.rank) throw new QueryError("orderBy", RANK_NOT_PAGED);
      if (checked.take === undefined) return { items: await findMany(args), nextCursor: null };
      // One row more than asked says whether a next page exists, without a count.
      const found = plan({ ...(args as object), take: checked.take + 1 });
      const { rows, tuples } = kind === "postgres" ? await findTuplesPostgres(db, model, table, found) : await findTuplesSqlite(db, model, table, found);
      const items = rows.slice(0, checked.take);
      const last = items.at(-1);
      return { items, nextCursor: rows.length > checked.take && last ? cursorOf(kind, table, checked.ordering, last, tuples[items.length - 1]) : null };
    },
    predicate(where: unknown) {
      return compileWhere(kind, table, where, { qualifier: table.name, model, budget: new QueryBudget(limits) });
    },
    async count(args?: unknown) {
      const checked = plan(args, COUNT_KEYS);
      const where = checked.where ? sql` where ${checked.where}` : sql``;
      const { rows } = await sql<{ count: unknown }>`select count(*) as "count" from ${sql.id(table.name)}${where}`.execute(db);
      // Postgres' count is a bigint (a string through pg); a count fits a JS number.
      return Number(rows[0]?.count ?? 0);
    },
  });
}
