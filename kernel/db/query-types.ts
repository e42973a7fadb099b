import type { ColumnState } from "../schema/columns.js";
import type { ColumnsRow, RelationMapOf, RelationState, SchemaResult, TablesOf } from "../schema/types.js";
import type { RawBuilder, SqlBool } from "kysely";
import type { CompiledFind, QueryScope } from "./query.js";

/**
 * The query language typed from a schema: what `where`, `orderBy` and `include` accept for one table,
 * and the rows they return. These types mirror the runtime checks of `where.ts` and `query-args.ts`,
 * so an argument the server would refuse with 400 is a type error first. Every filter is a named
 * interface, so an error names `TextFilter<string>` rather than an expanded union.
 *
 * `Tables` is a schema's tables (`TablesOf<S>`), `Rels` its relations (`RelationMapOf<S>`).
 */

/** A value a filter accepts, by column type (text types use the select type, so enums narrow). */
interface FilterValues {
  serial: number;
  integer: number;
  real: number;
  bigint: string | number | bigint;
  decimal: string | number;
  timestamp: Date | string;
  date: Date | string;
  boolean: boolean;
  bytes: Uint8Array;
  jsonb: never;
  text: string;
  varchar: string;
  uuid: string;
  vector: never;
}

type TextKind = "text" | "varchar" | "uuid";

export type FilterValue<C extends ColumnState> = C["kind"] extends TextKind ? C["select"] : FilterValues[C["kind"]];

/** `equals`, `not`, `in` and `notIn`: every filterable column. `N` is `null` on nullable columns. */
export interface EqualityFilter<V, N = never> {
  equals?: V | N;
  not?: V | N | EqualityFilter<V, N>;
  in?: readonly V[];
  notIn?: readonly V[];
}

/** Numbers, bigints, decimals, dates and timestamps also compare. */
export interface OrderedFilter<V, N = never> extends EqualityFilter<V, N> {
  not?: V | N | OrderedFilter<V, N>;
  lt?: V;
  lte?: V;
  gt?: V;
  gte?: V;
}

/** Text, varchar and uuid columns also match substrings (case-sensitive, wildcards literal). */
export interface TextFilter<V, N = never> extends EqualityFilter<V, N> {
  not?: V | N | TextFilter<V, N>;
  contains?: string;
  startsWith?: string;
  endsWith?: string;
}

/** Added to the filter of a nullable column. */
export interface NullFilter {
  isNull?: boolean;
}

/** A nullable jsonb column is only tested for null. A non-nullable one cannot be filtered at all. */
export interface JsonNullFilter extends NullFilter {
  equals?: null;
  not?: null;
}

type FilterOf<C extends ColumnState, N> = C["kind"] extends TextKind
  ? TextFilter<FilterValue<C>, N>
  : C["kind"] extends "boolean" | "bytes"
    ? EqualityFilter<FilterValue<C>, N>
    : OrderedFilter<FilterValue<C>, N>;

/** What `where: { <column>: ... }` accepts: a value (equality), `null` when nullable, or a filter. */
export type ColumnWhere<C> = C extends ColumnState
  ? C["kind"] extends "jsonb" | "vector"
    ? C["nullable"] extends true
      ? null | JsonNullFilter
      : never
    : C["nullable"] extends true
      ? FilterValue<C> | null | (FilterOf<C, null> & NullFilter)
      : FilterValue<C> | FilterOf<C, never>
  : never;

type LogicKey = "AND" | "OR" | "NOT";

/**
 * `where` for a table: its columns, and `AND`/`OR`/`NOT` (one object or an array) nesting freely.
 * Given the schema's tables, every relation map and the table's name (`Where<Cols, Tables, Rels, T>`),
 * its relations too, as relation filters whose nested `where` is the related table's.
 */
export type Where<Cols, Tables = {}, Rels = {}, T extends PropertyKey = never> = {
  [K in Exclude<keyof Cols, LogicKey> | LogicKey | Exclude<keyof TableRelations<Rels, T>, keyof Cols>]?: K extends LogicKey
    ? Where<Cols, Tables, Rels, T> | readonly Where<Cols, Tables, Rels, T>[]
    : K extends keyof Cols
      ? ColumnWhere<Cols[K]>
      : RelationFilter<Tables, Rels, TableRelations<Rels, T>[K & keyof TableRelations<Rels, T>]>;
};

type TableRelations<Rels, T> = [T] extends [never] ? {} : T extends keyof Rels ? Rels[T] : {};

/** A filter on a hasMany or manyToMany relation: some, every or none of the related rows match. */
export interface ManyFilter<W> {
  some?: W;
  every?: W;
  none?: W;
}

/** A filter on a belongsTo or hasOne relation: the related row matches (`is`) or not; `null` for none. */
export interface OneFilter<W> {
  is?: W | null;
  isNot?: W | null;
}

/** What `where: { <relation>: ... }` accepts: `ManyFilter` or `OneFilter` over the target's `where`. */
export type RelationFilter<Tables, Rels, R> = R extends RelationState<infer K, infer T>
  ? T extends keyof Tables
    ? K extends "hasMany" | "manyToMany"
      ? ManyFilter<Where<Tables[T], Tables, Rels, T>>
      : OneFilter<Where<Tables[T], Tables, Rels, T>>
    : never
  : never;

/** `where` of table `T` of schema `S`, relation filters included. */
export type WhereOf<S extends SchemaResult<any, any>, T extends keyof TablesOf<S>> = Where<TablesOf<S>[T], TablesOf<S>, RelationMapOf<S>, T>;

/** Columns that can be ordered by: all but jsonb, bytes and vector. */
export type OrderableColumn<Cols> = {
  [K in keyof Cols]: Cols[K] extends { kind: "jsonb" | "bytes" | "vector" } ? never : K;
}[keyof Cols] &
  string;

/** One `orderBy` entry: `{ column: "asc" | "desc" }`. */
export type OrderByEntry<Cols> = { readonly [K in OrderableColumn<Cols>]?: "asc" | "desc" };

/** The vector columns of a table. */
export type VectorColumn<Cols> = { [K in keyof Cols]: Cols[K] extends { kind: "vector" } ? K : never }[keyof Cols] & string;

/** `nearest`: the k rows whose vector `column` is nearest `vector` (exactly the column's length). */
export interface NearestArgs<Cols> {
  column: VectorColumn<Cols>;
  vector: readonly number[];
  k: number;
}

/** A row of a `nearest` list carries its distance from the searched vector; other rows do not. */
export type WithDistance<Row, N> = [N] extends [never] ? Row : Row & { _distance: number };

/** What a relation brings: an array (hasMany, manyToMany) or one row or null (belongsTo, hasOne). */
export type Related<Tables, R> = R extends RelationState<infer K, infer T>
  ? T extends keyof Tables
    ? K extends "hasMany" | "manyToMany"
      ? ColumnsRow<Tables[T]>[]
      : ColumnsRow<Tables[T]> | null
    : never
  : never;

type Asked<I> = { [R in keyof I]: I[R] extends false | undefined ? never : R }[keyof I];

/** The relations `include` asked for, typed by kind; a relation not asked for has no key. */
export type Included<Tables, Rels, I> = { -readonly [R in Asked<I> & keyof Rels]: Related<Tables, Rels[R]> };

/** A row plus what `include` asked for (the row alone when nothing was). */
export type WithIncluded<Row, Tables, Rels, I> = [Asked<I>] extends [never] ? Row : Row & Included<Tables, Rels, I>;

/** What a key of `include` that is not a relation is typed as, so the error names the key. */
export interface NotARelation<K> {
  readonly "~notARelation": K;
}

/** The keys of `include` that are not relations, each typed `NotARelation<key>`. */
export type NotRelations<I, Allowed> = { [K in Exclude<keyof I, Allowed>]: NotARelation<K> };

/** What `include` accepts per relation on `db.query`: all rows, or those matching the target's `where`. */
export type IncludeOf<Tables, Rels> = {
  readonly [R in keyof Rels]?: boolean | { readonly where?: Where<TargetColumns<Tables, Rels[R]>> };
};

type TargetColumns<Tables, R> = R extends { target: infer T } ? (T extends keyof Tables ? Tables[T] : never) : never;

export interface FindArgs<Tables, Rels, Cols, I, W = Where<Cols>> {
  where?: W;
  /** An array of `{ column: direction }`, or one alone. The primary key breaks ties. */
  orderBy?: OrderByEntry<Cols> | readonly OrderByEntry<Cols>[];
  take?: number;
  skip?: number;
  include?: I & NotRelations<I, keyof Rels>;
  /** A previous page's `nextCursor`: only rows after it, under the same `where` and `orderBy`. */
  after?: string;
  /** Words to find in the table's full-text index (`.search()`): best match first unless `orderBy` is given. */
  search?: string;
  /** The k rows nearest a vector, nearest first, each with `_distance` (no orderBy, take, skip or after). */
  nearest?: NearestArgs<Cols>;
  /** Rules the read runs under, apart from `where` (see `QueryScope`). */
  scope?: QueryScope;
}

/** `db.query.<table>` typed by the schema: arguments checked, included relations typed. */
export interface SchemaTableQuery<Tables, Rels, T extends keyof Tables, W = Where<Tables[T], Tables, Rels, T & PropertyKey>> {
  findMany<const I extends IncludeOf<Tables, RelsOf<Rels, T>> = {}, const N extends NearestArgs<Tables[T]> = never>(
    args?: FindArgs<Tables, RelsOf<Rels, T>, Tables[T], I, W> & { nearest?: N },
  ): Promise<WithDistance<WithIncluded<ColumnsRow<Tables[T]>, Tables, RelsOf<Rels, T>, I>, N>[]>;
  findFirst<const I extends IncludeOf<Tables, RelsOf<Rels, T>> = {}>(
    args?: FindArgs<Tables, RelsOf<Rels, T>, Tables[T], I, W>,
  ): Promise<WithIncluded<ColumnsRow<Tables[T]>, Tables, RelsOf<Rels, T>, I> | null>;
  count(args?: { where?: W; search?: string; scope?: QueryScope }): Promise<number>;
  /** `where` compiled for this table's own statements (see `TableQuery.predicate`). */
  predicate(where: W | undefined): RawBuilder<SqlBool> | undefined;
  /** `findMany(args)` as a keyset page; `nextCursor` (null on the last page) goes in `after` (see `TableQuery.findPage`). */
  findPage<const I extends IncludeOf<Tables, RelsOf<Rels, T>> = {}>(
    args?: FindArgs<Tables, RelsOf<Rels, T>, Tables[T], I, W>,
  ): Promise<{ items: WithIncluded<ColumnsRow<Tables[T]>, Tables, RelsOf<Rels, T>, I>[]; nextCursor: string | null }>;
  /** The SQL and parameters `findMany(args)` would run, validated the same way, without running it. */
  compile<const I extends IncludeOf<Tables, RelsOf<Rels, T>> = {}>(args?: FindArgs<Tables, RelsOf<Rels, T>, Tables[T], I, W>): CompiledFind;
  /** `findMany(args)` as a stream of full snapshots (see `TableQuery.live`). */
  live<const I extends IncludeOf<Tables, RelsOf<Rels, T>> = {}>(
    args?: FindArgs<Tables, RelsOf<Rels, T>, Tables[T], I, W>,
    options?: { signal?: AbortSignal },
  ): AsyncIterableIterator<WithIncluded<ColumnsRow<Tables[T]>, Tables, RelsOf<Rels, T>, I>[]>;
}

/** A table's relations by name; `{}` when it declares none. */
export type RelsOf<Rels, T> = T extends keyof Rels ? Rels[T] : {};

/** `db.query` typed by a schema's tables and relations: one entry per table. */
export type SchemaQueryApi<Tables, Rels> = { readonly [T in keyof Tables & string]: SchemaTableQuery<Tables, Rels, T> };

/** `db.query` of a schema version: `QueryOf<typeof v1>`. */
export type QueryOf<S extends SchemaResult<any, any>> = SchemaQueryApi<TablesOf<S>, RelationMapOf<S>>;
