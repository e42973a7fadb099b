/**
 * The runtime shape of a schema version. The builder (`schema.ts`) produces it, and everything that
 * reads a schema (DDL, migrations, relational queries, resources, admin, OpenAPI) reads only this.
 * It is plain, frozen data: no functions, so it can be diffed, snapshotted and printed.
 */

export const COLUMN_TYPES = [
  "serial",
  "text",
  "varchar",
  "integer",
  "boolean",
  "timestamp",
  "bigint",
  "decimal",
  "real",
  "date",
  "jsonb",
  "uuid",
  "bytes",
  "vector",
] as const;

export type ColumnType = (typeof COLUMN_TYPES)[number];

/** How a vector column measures nearness: pgvector's `<=>`, `<->` and `<#>` operators. */
export type VectorDistance = "cosine" | "l2" | "inner";

export type ForeignKeyAction = "cascade" | "set null" | "restrict" | "no action";

export interface ForeignKeyActions {
  onDelete?: ForeignKeyAction;
  onUpdate?: ForeignKeyAction;
}

export type ColumnDefault =
  | { readonly kind: "value"; readonly value: string | number | boolean }
  | { readonly kind: "sql"; readonly sql: string };

export interface ColumnModel {
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly primaryKey: boolean;
  readonly unique: boolean;
  /** A non-unique index named `{table}_{column}_idx`; ignored on unique and primary-key columns. */
  readonly index: boolean;
  readonly default?: ColumnDefault;
  readonly references?: { readonly table: string; readonly column: string } & Readonly<ForeignKeyActions>;
  readonly enum?: { readonly values: readonly string[]; readonly multiple: boolean };
  /** Set on vector columns: their length and the distance `nearest` (and `.index()`, an HNSW index) use. */
  readonly vector?: { readonly dimensions: number; readonly distance: VectorDistance };
  /** Set by `.secret()`: the value is a credential, redacted wherever Trellis records rows (the audit log). No DDL. */
  readonly secret?: boolean;
}

export interface TableModel {
  readonly name: string;
  /** Columns in declaration order (object key order is the order DDL emits them). */
  readonly columns: Readonly<Record<string, ColumnModel>>;
  /** Set by `.search()`: the table's full-text index. */
  readonly search?: SearchModel;
}

/** A full-text weight: A ranks highest, D lowest. */
export type SearchWeight = "A" | "B" | "C" | "D";

/** The full-text index of a table: its text columns with their weights, and the language. */
export interface SearchModel {
  /** Searchable text columns in declaration order, each with its weight. */
  readonly columns: Readonly<Record<string, SearchWeight>>;
  /** A PostgreSQL text search configuration (`simple`, `english`, ...); SQLite knows `simple` and `english`. */
  readonly language: string;
}

export type RelationKind = "hasMany" | "hasOne" | "belongsTo" | "manyToMany";

/**
 * A named relation from `table`. For hasMany/hasOne/belongsTo, `from` is a column of `table` and `to`
 * a column of `target`. For manyToMany, `via` is the pivot table: `pivotFrom` references `table.from`
 * and `pivotTo` references `target.to`.
 */
export interface RelationModel {
  readonly kind: RelationKind;
  readonly name: string;
  readonly table: string;
  readonly target: string;
  readonly from: string;
  readonly to: string;
  readonly via?: string;
  readonly pivotFrom?: string;
  readonly pivotTo?: string;
}

export interface SchemaModel {
  readonly version: string;
  readonly tables: Readonly<Record<string, TableModel>>;
  /** Relations by source table, then by relation name. */
  readonly relations: Readonly<Record<string, Readonly<Record<string, RelationModel>>>>;
  /** Set by `.auth()`. */
  readonly auth?: {
    readonly roles?: readonly string[];
    readonly apiKeys: boolean;
    /** Sign-in methods whose tables the schema declares (signin-tables.ts). */
    readonly twoFactor?: boolean;
    readonly passkeys?: boolean;
    readonly sso?: boolean;
    readonly organizations?: { readonly teams: boolean };
  };
  /** Set by `.files()`. */
  readonly files?: { readonly owner: boolean; readonly attachTo: readonly string[]; readonly placeholder?: boolean; readonly organizations?: boolean };
}

/** The schema of an app that registered none: no tables. */
export const EMPTY_SCHEMA: SchemaModel = Object.freeze({ version: "0", tables: Object.freeze({}), relations: Object.freeze({}) });

/** The primary-key column of a table, or undefined when it has none. */
export function primaryKeyOf(table: TableModel): string | undefined {
  for (const [name, column] of Object.entries(table.columns)) if (column.primaryKey) return name;
  return undefined;
}
