import type { Generated } from "kysely";
import type { ColumnState } from "./columns.js";
import type { RelationKind, SchemaModel } from "./model.js";

/** A relation as the type system sees it: enough to type `include` and its result shape. */
export interface RelationState<K extends RelationKind = RelationKind, T extends string = string> {
  kind: K;
  target: T;
}

/** Tables by name, columns by name. */
export type TablesShape = Record<string, Record<string, ColumnState>>;
/** Relations by source table, then by relation name. */
export type RelationsShape = Record<string, Record<string, RelationState>>;

/**
 * A built schema version. At runtime it is exactly a frozen `SchemaModel`; the `~types` key never
 * exists and only carries the column and relation states for `InferDB` and friends.
 */
export type SchemaResult<TTables = TablesShape, TRelations = RelationsShape> = SchemaModel & {
  readonly "~types"?: { readonly tables: TTables; readonly relations: TRelations };
};

type AnySchema = SchemaResult<any, any>;

/** `B` over `A`: keys of both, `B` winning on a collision. Mapped so the result is one flat object. */
export type Merge<A, B> = {
  [K in keyof A | keyof B]: K extends keyof B ? B[K] : K extends keyof A ? A[K] : never;
};

/** Two table (or relation) maps merged one level deeper: a table in both gets `Merge`d columns. */
export type MergeTables<A, B> = {
  [K in keyof A | keyof B]: K extends keyof B
    ? K extends keyof A
      ? Merge<A[K], B[K]>
      : B[K]
    : K extends keyof A
      ? A[K]
      : never;
};

/**
 * One table added to the map. A new name is a plain intersection, the cheap path taken by almost
 * every `.table()` call; only a re-declaration pays for a `MergeTables` pass.
 */
export type AddTable<T, N extends string, C> = N extends keyof T ? MergeTables<T, { [K in N]: C }> : T & { [K in N]: C };

export type TablesOf<S extends AnySchema> = NonNullable<S["~types"]>["tables"];
export type RelationMapOf<S extends AnySchema> = NonNullable<S["~types"]>["relations"];

/** The select type of a column state. */
export type SelectOf<C> = C extends ColumnState ? (C["nullable"] extends true ? C["select"] | null : C["select"]) : never;

/** The row of a table's columns: each column's select type, `| null` when nullable. */
export type ColumnsRow<Cols> = { -readonly [K in keyof Cols]: SelectOf<Cols[K]> };

/** Row types by table: `InferDB<typeof v1>["post"]`. */
export type InferDB<S extends AnySchema> = { [T in keyof TablesOf<S>]: ColumnsRow<TablesOf<S>[T]> };

export type TableName<S extends AnySchema> = keyof TablesOf<S> & string;

export type RowOf<S extends AnySchema, T extends TableName<S>> = ColumnsRow<TablesOf<S>[T]>;

/** Column names the database fills on its own, so inserts may leave them out. */
type OptionalOnInsert<Cols> = {
  [K in keyof Cols]: Cols[K] extends { generated: true } | { nullable: true } ? K : never;
}[keyof Cols];
type Serial<Cols> = { [K in keyof Cols]: Cols[K] extends { kind: "serial" } ? K : never }[keyof Cols];

/**
 * The create-input shape of a table: serial columns are left out, defaulted and nullable columns
 * are optional, the rest required.
 */
export type InsertOf<S extends AnySchema, T extends TableName<S>> = InsertShape<TablesOf<S>[T]>;
type InsertShape<Cols> = {
  [K in Exclude<keyof Cols, OptionalOnInsert<Cols>>]: SelectOf<Cols[K]>;
} & { [K in Exclude<OptionalOnInsert<Cols>, Serial<Cols>>]?: SelectOf<Cols[K]> } extends infer R
  ? { [K in keyof R]: R[K] }
  : never;

/** The name of a table's `.primaryKey()` column (never when it has none). */
export type PrimaryKeyOf<S extends AnySchema, T extends TableName<S>> = {
  [K in keyof TablesOf<S>[T]]: TablesOf<S>[T][K] extends { primaryKey: true } ? K : never;
}[keyof TablesOf<S>[T]] &
  string;

/** Relation name to `{ kind, target }` for one table; `{}` when it declares none. */
export type RelationsOf<S extends AnySchema, T extends TableName<S>> = T extends keyof RelationMapOf<S>
  ? RelationMapOf<S>[T]
  : {};

/**
 * Kysely's wrapper for one column. Nullable columns need none: Kysely already makes a column whose
 * insert type admits `null` optional in `insertInto().values()`.
 */
type KyselyColumn<C> = C extends ColumnState
  ? C["generated"] extends true
    ? Generated<SelectOf<C>>
    : SelectOf<C>
  : never;

/** The `Database` type for `new Kysely<KyselyDatabase<typeof v1>>(...)`. */
export type KyselyDatabase<S extends AnySchema> = {
  [T in keyof TablesOf<S>]: { [K in keyof TablesOf<S>[T]]: KyselyColumn<TablesOf<S>[T][K]> };
};
