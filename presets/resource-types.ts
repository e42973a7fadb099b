import type { ClientPromiseResult, FriendlyClientOptions } from "@orpc/client";
import type { Procedure, ProcedureClient, Schema } from "@orpc/server";
import type { ColumnState, ColumnsRow, RelationMapOf, SchemaResult, TableName, TablesOf } from "../kernel/schema/index.js";
import type { SoftDeleteOptions } from "../plugins/resources/index.js";
import type { AuditEntry } from "../plugins/audit/index.js";
import type { FilterValue, NearestArgs, OrderByEntry, RelsOf, Where, WhereOf, WithDistance, WithIncluded } from "../kernel/db/query-types.js";

type AnySchema = SchemaResult<any, any>;

/**
 * What a `.resource()` call's options decide about its types: the owner column, `writable`,
 * `readonly` and `includable` names, and whether `live`, `softDelete` and `history` are on. Captured
 * from the options literal.
 */
export interface ResourceShape<
  Owner extends string = never,
  Writable extends string = never,
  Readonly extends string = never,
  Includable extends string = never,
  Live = false,
  SoftDelete = false,
  History = false,
> {
  owner: Owner;
  writable: Writable;
  readonly: Readonly;
  includable: Includable;
  live: Live;
  softDelete: SoftDelete;
  history: History;
}

type AnyShape = ResourceShape<any, any, any, any, any, any, any>;

/** The `softDelete` option as written: `true` or a purge delay turns `{name}.restore` on. */
export type SoftDeleteSetting = boolean | SoftDeleteOptions;

/** The `live` option as written: `true` or limits turn `{name}.live` on. */
export type LiveSetting = boolean | { revalidateMs?: number | false; max?: number; maxPerCaller?: number };

/** A value a resource input accepts for a column: what its zod schema takes, `null` when nullable. */
export type InputValue<C> = C extends ColumnState
  ? (C["kind"] extends "jsonb" ? unknown : C["kind"] extends "vector" ? readonly number[] : FilterValue<C>) | (C["nullable"] extends true ? null : never)
  : never;

type OptionalOnCreate<Cols> = {
  [K in keyof Cols]: Cols[K] extends { generated: true } | { nullable: true } ? K : never;
}[keyof Cols];

/** Create data: columns without a default are required, defaulted and nullable ones optional. */
export type CreateData<Cols, K extends keyof Cols> = Flat<
  { [P in Exclude<K, OptionalOnCreate<Cols>>]: InputValue<Cols[P]> } & { [P in Extract<K, OptionalOnCreate<Cols>>]?: InputValue<Cols[P]> }
>;

/** One object type instead of an intersection, so editors show the create data as one shape. */
type Flat<T> = { [P in keyof T]: T[P] };

type SerialColumns<Cols> = { [K in keyof Cols]: Cols[K] extends { kind: "serial" } ? K : never }[keyof Cols];
type PrimaryKey<Cols> = { [K in keyof Cols]: Cols[K] extends { primaryKey: true } ? K : never }[keyof Cols] & string;

/** Columns a client sets: `writable` (all when unset), less `readonly`, the owner column and serials. */
export type SettableColumns<Cols, O extends AnyShape> = Exclude<
  [O["writable"]] extends [never] ? keyof Cols : O["writable"] & keyof Cols,
  O["owner"] | O["readonly"] | SerialColumns<Cols>
>;

/** `{ <primary key>: value }`, the `where` of get, update and delete. */
export type KeyOf<Cols> = { [K in PrimaryKey<Cols>]: FilterValue<Cols[K] & ColumnState> };

/** `include` on a resource: `true` per includable relation. */
export type IncludeFlags<Includable extends PropertyKey> = { readonly [R in Includable]?: true };

/** What a key of a resource's `include` outside its `includable` option is typed as. */
export interface NotIncludable<K> {
  readonly "~notIncludable": K;
}

type NotIncludables<I, Allowed> = { [K in Exclude<keyof I, Allowed>]: NotIncludable<K> };

export interface ListInput<Cols, Includable extends string, I = IncludeFlags<Includable>, N = NearestArgs<Cols>, W = Where<Cols>> {
  /** Columns, `AND`/`OR`/`NOT`, and relation filters (`some`/`every`/`none`, `is`/`isNot`). */
  where?: W;
  orderBy?: readonly OrderByEntry<Cols>[];
  take?: number;
  skip?: number;
  include?: I & NotIncludables<I, Includable>;
  /** A previous page's `nextCursor` (`{name}.page`): only rows after it, same `where` and `orderBy`. */
  after?: string;
  /** Words to find in the table's full-text index (`.search()`): best match first unless `orderBy` is given. */
  search?: string;
  /** `list` only: the k rows nearest a vector, nearest first, each with `_distance` (no orderBy, take, skip or after). */
  nearest?: N;
}

export interface GetInput<Cols, Includable extends string, I = IncludeFlags<Includable>> {
  where: KeyOf<Cols>;
  include?: I & NotIncludables<I, Includable>;
}

export interface LiveInput<Cols, Includable extends string, I = IncludeFlags<Includable>, W = Where<Cols>> {
  where?: W;
  orderBy?: readonly OrderByEntry<Cols>[];
  take?: number;
  /** Words to find in the table's full-text index: the stream re-runs the search on every change. */
  search?: string;
  include?: I & NotIncludables<I, Includable>;
}

export interface UpdateInput<Cols, K extends keyof Cols> {
  where: KeyOf<Cols>;
  data: { [P in K]?: InputValue<Cols[P]> };
}

type Options = FriendlyClientOptions<Record<never, never>>;
/** The error type oRPC gives a procedure without declared errors. */
type ResourceError = ProcedureClient<Record<never, never>, Schema<unknown, unknown>, Schema<unknown, unknown>, Record<never, never>> extends (
  ...args: any[]
) => ClientPromiseResult<any, infer E>
  ? E
  : never;
type Result<T> = ClientPromiseResult<T, ResourceError>;

/** `list` as a client calls it: the rows carry what `include` asked for. */
export interface ListCall<Tables, Rels, Cols, Includable extends string, W = Where<Cols>> {
  <const I extends IncludeFlags<Includable> = {}, const N extends NearestArgs<Cols> = never>(
    input?: ListInput<Cols, Includable, I, N, W>,
    options?: Options,
  ): Result<WithDistance<WithIncluded<ColumnsRow<Cols>, Tables, Rels, I>, N>[]>;
}

/** One page of `{name}.page`: `nextCursor` is null on the last page. */
export interface ResourcePage<Row> {
  items: Row[];
  nextCursor: string | null;
}

/** `page` as a client calls it: `list`'s rows in `{ items, nextCursor }`. */
export interface PageCall<Tables, Rels, Cols, Includable extends string, W = Where<Cols>> {
  <const I extends IncludeFlags<Includable> = {}>(
    input?: ListInput<Cols, Includable, I, NearestArgs<Cols>, W>,
    options?: Options,
  ): Result<ResourcePage<WithIncluded<ColumnsRow<Cols>, Tables, Rels, I>>>;
}

/** `{name}.history` input: the row, and a page of its entries. */
export interface HistoryInput<Key> {
  where: Key;
  /** A previous page's `nextCursor`: only entries older than its last. */
  cursor?: string;
  /** Entries per page, 1 to 200. @default 50 */
  take?: number;
}

/** One page of `{name}.history`, newest first: `nextCursor` is null on the last page. */
export interface HistoryPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

/** `batch` input: creates, then updates, then deletes, in one transaction. */
export interface BatchInput<Create, Update, Key> {
  create?: readonly Create[];
  update?: readonly Update[];
  delete?: readonly { where: Key }[];
}

/** `batch` answer: the rows as the single procedures answer them, per list. */
export interface BatchResult<Row> {
  create: Row[];
  update: Row[];
  delete: Row[];
}

export interface GetCall<Tables, Rels, Cols, Includable extends string> {
  <const I extends IncludeFlags<Includable> = {}>(
    input: GetInput<Cols, Includable, I>,
    options?: Options,
  ): Result<WithIncluded<ColumnsRow<Cols>, Tables, Rels, I>>;
}

export interface LiveCall<Tables, Rels, Cols, Includable extends string, W = Where<Cols>> {
  <const I extends IncludeFlags<Includable> = {}>(
    input?: LiveInput<Cols, Includable, I, W>,
    options?: Options,
  ): Result<AsyncIterableIterator<WithIncluded<ColumnsRow<Cols>, Tables, Rels, I>[]>>;
}

export interface WriteCall<In, Out> {
  (input: In, options?: Options): Result<Out>;
}

/**
 * A procedure typed by what callers see, plus the phantom `~client`: the call signature a typed
 * client uses instead of oRPC's (generic over `include`, so included relations are typed). The key
 * exists only in types; `ClientOf` reads it, and any procedure built with zod infers without it.
 */
export type TypedProcedure<I, O, Call> = Procedure<any, any, Schema<I, unknown>, Schema<unknown, O>, Record<never, never>, any> & {
  readonly "~client": Call;
};

type Cols<S extends AnySchema, T extends TableName<S>> = TablesOf<S>[T];
type Rels<S extends AnySchema, T extends TableName<S>> = RelsOf<RelationMapOf<S>, T>;
type Row<S extends AnySchema, T extends TableName<S>> = ColumnsRow<Cols<S, T>>;
type Settable<S extends AnySchema, T extends TableName<S>, O extends AnyShape> = SettableColumns<Cols<S, T>, O>;
type Updatable<S extends AnySchema, T extends TableName<S>, O extends AnyShape> = Exclude<
  Settable<S, T, O>,
  PrimaryKey<Cols<S, T>>
>;

/** (A type alias, not an interface: oRPC's router constraint needs an implicit index signature.)
 * The generated procedures of `.resource(name)`: `{name}.list/get/create/update/delete/page/batch`,
 * `{name}.live` when `live` is on, `{name}.restore` when `softDelete` is and `{name}.history` when `history` is. */
export type ResourceRouter<S extends AnySchema, T extends TableName<S>, O extends AnyShape = ResourceShape> = {
  list: TypedProcedure<
    ListInput<Cols<S, T>, O["includable"], IncludeFlags<O["includable"]>, NearestArgs<Cols<S, T>>, WhereOf<S, T>> | undefined,
    Array<Row<S, T> & Record<string, unknown>>,
    ListCall<TablesOf<S>, Rels<S, T>, Cols<S, T>, O["includable"], WhereOf<S, T>>
  >;
  get: TypedProcedure<
    GetInput<Cols<S, T>, O["includable"]>,
    Row<S, T> & Record<string, unknown>,
    GetCall<TablesOf<S>, Rels<S, T>, Cols<S, T>, O["includable"]>
  >;
  create: TypedProcedure<
    CreateData<Cols<S, T>, Settable<S, T, O>>,
    Row<S, T>,
    WriteCall<CreateData<Cols<S, T>, Settable<S, T, O>>, Row<S, T>>
  >;
  update: TypedProcedure<
    UpdateInput<Cols<S, T>, Updatable<S, T, O>>,
    Row<S, T>,
    WriteCall<UpdateInput<Cols<S, T>, Updatable<S, T, O>>, Row<S, T>>
  >;
  delete: TypedProcedure<{ where: KeyOf<Cols<S, T>> }, Row<S, T>, WriteCall<{ where: KeyOf<Cols<S, T>> }, Row<S, T>>>;
  page: TypedProcedure<
    ListInput<Cols<S, T>, O["includable"], IncludeFlags<O["includable"]>, NearestArgs<Cols<S, T>>, WhereOf<S, T>> | undefined,
    ResourcePage<Row<S, T> & Record<string, unknown>>,
    PageCall<TablesOf<S>, Rels<S, T>, Cols<S, T>, O["includable"], WhereOf<S, T>>
  >;
  batch: TypedProcedure<BatchOf<S, T, O>, BatchResult<Row<S, T>>, WriteCall<BatchOf<S, T, O>, BatchResult<Row<S, T>>>>;
} & ([O["live"]] extends [false | undefined] ? {} : { live: LiveProcedure<S, T, O> }) &
  ([O["softDelete"]] extends [false | undefined] ? {} : { restore: TypedProcedure<{ where: KeyOf<Cols<S, T>> }, Row<S, T>, WriteCall<{ where: KeyOf<Cols<S, T>> }, Row<S, T>>> }) &
  ([O["history"]] extends [true] ? { history: TypedProcedure<HistoryInput<KeyOf<Cols<S, T>>>, HistoryPage, WriteCall<HistoryInput<KeyOf<Cols<S, T>>>, HistoryPage>> } : {});

type BatchOf<S extends AnySchema, T extends TableName<S>, O extends AnyShape> = BatchInput<
  CreateData<Cols<S, T>, Settable<S, T, O>>,
  UpdateInput<Cols<S, T>, Updatable<S, T, O>>,
  KeyOf<Cols<S, T>>
>;

type LiveProcedure<S extends AnySchema, T extends TableName<S>, O extends AnyShape> = TypedProcedure<
  LiveInput<Cols<S, T>, O["includable"], IncludeFlags<O["includable"]>, WhereOf<S, T>> | undefined,
  AsyncIterableIterator<Array<Row<S, T> & Record<string, unknown>>>,
  LiveCall<TablesOf<S>, Rels<S, T>, Cols<S, T>, O["includable"], WhereOf<S, T>>
>;
