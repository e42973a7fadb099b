import type { ColumnDefault, ColumnModel, ColumnType, ForeignKeyAction, ForeignKeyActions, VectorDistance } from "./model.js";
import { VECTOR_MAX_INDEXED_DIMENSIONS, vectorModel } from "./vector.js";

/**
 * What the type system knows about one column. It lives only in types (the phantom `~state` of a
 * `Column` and of a `SchemaResult`), so a schema with many tables stays cheap to check and to emit.
 */
export interface ColumnState {
  readonly kind: ColumnType;
  /** The select type without `null`. */
  readonly select: unknown;
  readonly nullable: boolean;
  /** Serial, `.default()` or `.defaultSql()`: the database fills it when an insert leaves it out. */
  readonly generated: boolean;
  readonly primaryKey: boolean;
}

/**
 * A column state spelled out. Every builder and modifier returns one of these (never an anonymous
 * mapped type), so declaration files name it in one line per column instead of expanding it.
 */
export interface ColumnStateOf<
  K extends ColumnType,
  T,
  N extends boolean = false,
  G extends boolean = false,
  P extends boolean = false,
> extends ColumnState {
  readonly kind: K;
  readonly select: T;
  readonly nullable: N;
  readonly generated: G;
  readonly primaryKey: P;
}

type Nullable<S extends ColumnState> = ColumnStateOf<S["kind"], S["select"], true, S["generated"], S["primaryKey"]>;
type Defaulted<S extends ColumnState> = ColumnStateOf<S["kind"], S["select"], S["nullable"], true, S["primaryKey"]>;
type Keyed<S extends ColumnState> = ColumnStateOf<S["kind"], S["select"], S["nullable"], S["generated"], true>;
type Narrowed<S extends ColumnState, T> = ColumnStateOf<S["kind"], T, S["nullable"], S["generated"], S["primaryKey"]>;

/** Literal defaults are quoted by column type; dates and JSON are written as their SQL text. */
export type DefaultValueOf<S extends ColumnState> = S["kind"] extends "date" | "timestamp" | "jsonb"
  ? string
  : S["kind"] extends "bytes"
    ? never
    : S["select"];

export interface EnumOptions<M extends boolean> {
  /**
   * Store a comma-separated set of the values instead of exactly one (read it with `parseSet`).
   * The column then stays typed `string`.
   * @default false
   */
  multiple?: M;
}

const LITERAL_DEFAULT: Partial<Record<ColumnType, "string" | "number" | "boolean">> = {
  serial: "number",
  integer: "number",
  real: "number",
  boolean: "boolean",
  text: "string",
  varchar: "string",
  uuid: "string",
  decimal: "string",
  bigint: "string",
  date: "string",
  timestamp: "string",
  jsonb: "string",
};

const FK_ACTIONS: readonly ForeignKeyAction[] = ["cascade", "set null", "restrict", "no action"];

/**
 * One column declaration. Immutable: every modifier returns a new column, so a shared column
 * (`const id = t.text().primaryKey()`) can be reused across tables without leaking modifiers.
 */
export class Column<S extends ColumnState = ColumnState> {
  declare readonly "~state": S;
  readonly model: ColumnModel;

  constructor(model: ColumnModel) {
    this.model = Object.freeze(model);
  }

  private with(patch: Partial<ColumnModel>): Column<any> {
    return new Column({ ...this.model, ...patch });
  }

  /** Allows NULL; the column becomes optional on insert and is typed `| null`. */
  nullable(): Column<Nullable<S>> {
    return this.with({ nullable: true });
  }

  /** The table's key; drives the `where` type of resource get, update and delete. One per table. */
  primaryKey(): Column<Keyed<S>> {
    return this.with({ primaryKey: true });
  }

  unique(): Column<S> {
    return this.with({ unique: true });
  }

  /** Marks a credential (a token, a hash): the audit log records `[redacted]` instead of its values. */
  secret(): Column<S> {
    return this.with({ secret: true });
  }

  /**
   * A non-unique index named `{table}_{column}_idx`; no effect on unique or primary-key columns. On a
   * vector column, an HNSW index over the column's distance, which `nearest` searches use.
   */
  index(): Column<S> {
    const vector = this.model.vector;
    if (vector && vector.dimensions > VECTOR_MAX_INDEXED_DIMENSIONS) {
      throw new TypeError(`An HNSW index covers at most ${VECTOR_MAX_INDEXED_DIMENSIONS} dimensions; this vector has ${vector.dimensions}`);
    }
    return this.with({ index: true });
  }

  /**
   * A literal default, quoted by column type: a string (dates, timestamps and JSON as their text), a
   * number or a boolean. The column becomes optional in create inputs.
   */
  default(value: DefaultValueOf<S>): Column<Defaulted<S>> {
    const expected = LITERAL_DEFAULT[this.model.type];
    if (expected === undefined || typeof value !== expected) {
      throw new TypeError(
        `A ${this.model.type} column cannot default to ${JSON.stringify(value)}` +
          (expected ? ` (expected a ${expected})` : "; use .defaultSql()"),
      );
    }
    if (this.model.enum) checkEnumDefault(this.model.enum, value as string);
    const fallback: ColumnDefault = { kind: "value", value: value as string | number | boolean };
    return this.with({ default: fallback });
  }

  /** A raw SQL default, emitted verbatim (for example `CURRENT_TIMESTAMP`). */
  defaultSql(expr: string): Column<Defaulted<S>> {
    if (typeof expr !== "string" || expr.trim() === "") throw new TypeError("defaultSql() needs a SQL expression");
    return this.with({ default: { kind: "sql", sql: expr } });
  }

  /**
   * A foreign key to `table.column`, which must be a primary key or unique. `onDelete` and `onUpdate`
   * default to the database's own `no action`: deleting a referenced row then fails.
   */
  references(table: string, column: string, actions: ForeignKeyActions = {}): Column<S> {
    for (const action of [actions.onDelete, actions.onUpdate]) {
      if (action !== undefined && !FK_ACTIONS.includes(action)) {
        throw new TypeError(`Unknown foreign-key action ${JSON.stringify(action)} (use ${FK_ACTIONS.join(", ")})`);
      }
    }
    const target = { table, column, ...pickDefined(actions) };
    return this.with({ references: Object.freeze(target) });
  }

  /** Restricts a text or varchar column to `values`; the type narrows to their union unless `multiple`. */
  enum<const V extends readonly [string, ...string[]], M extends boolean = false>(
    this: Column<S & { readonly kind: "text" | "varchar" }>,
    values: V,
    options?: EnumOptions<M>,
  ): Column<Narrowed<S, M extends true ? string : V[number]>> {
    if (this.model.type !== "text" && this.model.type !== "varchar") {
      throw new TypeError(`.enum() applies to text and varchar columns, not ${this.model.type}`);
    }
    const multiple = options?.multiple === true;
    if (!Array.isArray(values) || values.length === 0) throw new TypeError(".enum() needs at least one value");
    if (new Set(values).size !== values.length) throw new TypeError(`.enum() values repeat: ${values.join(", ")}`);
    for (const value of values) {
      if (typeof value !== "string" || value === "") throw new TypeError(".enum() values must be non-empty strings");
      // A comma would split one value into two when the set is parsed back.
      if (multiple && value.includes(",")) throw new TypeError(`.enum() value "${value}" contains a comma`);
    }
    const spec = Object.freeze({ values: Object.freeze([...values]), multiple });
    if (this.model.default?.kind === "value") checkEnumDefault(spec, this.model.default.value as string);
    return this.with({ enum: spec });
  }
}

function checkEnumDefault(spec: NonNullable<ColumnModel["enum"]>, value: string): void {
  const chosen = spec.multiple ? value.split(",").map((v) => v.trim()).filter(Boolean) : [value];
  const unknown = chosen.filter((v) => !spec.values.includes(v));
  if (unknown.length > 0) throw new TypeError(`Default ${JSON.stringify(value)} is not one of ${spec.values.join(", ")}`);
}

function pickDefined(actions: ForeignKeyActions): ForeignKeyActions {
  const out: ForeignKeyActions = {};
  if (actions.onDelete !== undefined) out.onDelete = actions.onDelete;
  if (actions.onUpdate !== undefined) out.onUpdate = actions.onUpdate;
  return out;
}

function column(type: ColumnType): Column<any> {
  return new Column({ type, nullable: false, primaryKey: false, unique: false, index: false });
}

/** The column builder handed to `.table(name, (t) => ...)`. */
export interface ColumnBuilder {
  /** Database-generated integer; omitted from create inputs. */
  serial(): Column<ColumnStateOf<"serial", number, false, true>>;
  text(): Column<ColumnStateOf<"text", string>>;
  varchar(): Column<ColumnStateOf<"varchar", string>>;
  integer(): Column<ColumnStateOf<"integer", number>>;
  boolean(): Column<ColumnStateOf<"boolean", boolean>>;
  timestamp(): Column<ColumnStateOf<"timestamp", Date>>;
  /** 64-bit integer carried as a string so no precision is lost in JavaScript. */
  bigint(): Column<ColumnStateOf<"bigint", string>>;
  /** Exact numeric carried as a string; use it for money. */
  decimal(): Column<ColumnStateOf<"decimal", string>>;
  /** Approximate floating point; not for money. */
  real(): Column<ColumnStateOf<"real", number>>;
  /** Calendar date without time. */
  date(): Column<ColumnStateOf<"date", Date>>;
  jsonb(): Column<ColumnStateOf<"jsonb", unknown>>;
  uuid(): Column<ColumnStateOf<"uuid", string>>;
  bytes(): Column<ColumnStateOf<"bytes", Uint8Array>>;
  /**
   * A pgvector `vector(dimensions)` (PostgreSQL with the pgvector extension, and the embedded
   * database; not SQLite): a `number[]` of exactly `dimensions` finite numbers, stored as float4.
   * `nearest` lists rows by `distance` to a given vector; `.index()` adds an HNSW index over it.
   */
  vector(dimensions: number, options?: VectorOptions): Column<ColumnStateOf<"vector", number[]>>;
}

export interface VectorOptions {
  /**
   * How nearness is measured: `"cosine"` (`<=>`, 1 - cosine similarity), `"l2"` (`<->`, Euclidean)
   * or `"inner"` (`<#>`, the negative inner product, so that smaller is nearer).
   * @default "cosine"
   */
  distance?: VectorDistance;
}

export const t: ColumnBuilder = Object.freeze({
  serial: () => column("serial"),
  text: () => column("text"),
  varchar: () => column("varchar"),
  integer: () => column("integer"),
  boolean: () => column("boolean"),
  timestamp: () => column("timestamp"),
  bigint: () => column("bigint"),
  decimal: () => column("decimal"),
  real: () => column("real"),
  date: () => column("date"),
  jsonb: () => column("jsonb"),
  uuid: () => column("uuid"),
  bytes: () => column("bytes"),
  vector: (dimensions: number, options?: VectorOptions): Column<any> => new Column({ ...column("vector").model, vector: vectorModel(dimensions, options?.distance) }),
});

/** What `.table()` accepts from its `define` callback. */
export type ColumnsShape = Record<string, Column<any>>;

export type ColumnModels = Record<string, ColumnModel>;

/** The models of a `define` callback's result; `table` only names the culprit in errors. */
export function columnModels(columns: ColumnsShape, table = "table"): ColumnModels {
  if (columns === null || typeof columns !== "object" || Array.isArray(columns)) {
    throw new TypeError(`.table("${table}") must return an object of columns`);
  }
  const out: ColumnModels = {};
  for (const [name, value] of Object.entries(columns)) {
    if (!(value instanceof Column)) throw new TypeError(`${table}.${name} is not a column (build it with t.*())`);
    out[name] = value.model;
  }
  return out;
}

/** The reverse of `Describe`: lets a hand-written table type check the columns that implement it. */
export type ColumnsOf<I> = { [K in keyof I]: Column<I[K] & ColumnState> };

/** Column declarations to their type-level states. */
export type Describe<C extends ColumnsShape> = { [K in keyof C]: C[K]["~state"] };

type Stamp = Column<ColumnStateOf<"timestamp", Date, false, true>>;

/** `createdAt` and `updatedAt`, both defaulting to `CURRENT_TIMESTAMP`; spread it into a table. */
export function timestamps(builder: ColumnBuilder): { createdAt: Stamp; updatedAt: Stamp } {
  return {
    createdAt: builder.timestamp().defaultSql("CURRENT_TIMESTAMP"),
    updatedAt: builder.timestamp().defaultSql("CURRENT_TIMESTAMP"),
  };
}
