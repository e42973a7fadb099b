import type { Procedure, Schema } from "@orpc/server";
import type { InsertOf, PrimaryKeyOf, RowOf, SchemaResult, TableName } from "../kernel/schema/index.js";

type AnySchema = SchemaResult<any, any>;

/** A procedure typed only by what callers see: its input and its output. */
type Proc<I, O> = Procedure<any, any, Schema<I, unknown>, Schema<unknown, O>, Record<never, never>, any>;

export type WhereInput = Record<string, unknown>;
export type OrderByInput<Row> = Array<Partial<Record<keyof Row & string, "asc" | "desc">>>;
export type IncludeInput = Record<string, true>;

type Key<S extends AnySchema, T extends TableName<S>> = { [K in PrimaryKeyOf<S, T>]: RowOf<S, T>[K] };
type Settable<S extends AnySchema, T extends TableName<S>, Owner extends string> = Omit<InsertOf<S, T>, Owner>;

/** (A type alias, not an interface: oRPC's router constraint needs an implicit index signature.)
 * The generated procedures of `.resource(name)`: `{name}.list/get/create/update/delete`. */
export type ResourceRouter<S extends AnySchema, T extends TableName<S>, Owner extends string = never> = {
  list: Proc<
    { where?: WhereInput; orderBy?: OrderByInput<RowOf<S, T>>; take?: number; skip?: number; include?: IncludeInput } | undefined,
    Array<RowOf<S, T> & Record<string, unknown>>
  >;
  get: Proc<{ where: Key<S, T>; include?: IncludeInput }, RowOf<S, T> & Record<string, unknown>>;
  create: Proc<Settable<S, T, Owner>, RowOf<S, T>>;
  update: Proc<{ where: Key<S, T>; data: Partial<Settable<S, T, Owner>> }, RowOf<S, T>>;
  delete: Proc<{ where: Key<S, T> }, RowOf<S, T>>;
};
