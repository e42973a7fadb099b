import type { RelationKind, RelationModel } from "./model.js";
import type { RelationState } from "./types.js";

/** What a `rel.*` call returns; `.relation()` adds the name and the source table. */
export interface RelationDef<K extends RelationKind = RelationKind, T extends string = string>
  extends RelationState<K, T> {
  readonly from: string;
  readonly to: string;
  readonly via?: string;
  readonly pivotFrom?: string;
  readonly pivotTo?: string;
}

type Cols<TTables, N> = N extends keyof TTables ? keyof TTables[N] & string : never;
type Tables<TTables> = keyof TTables & string;

/** Column names are checked against the tables declared so far, on both sides of the relation. */
export interface RelationBuilder<TTables, N extends string> {
  hasMany<T extends Tables<TTables>>(to: T, on: { from: Cols<TTables, N>; to: Cols<TTables, T> }): RelationDef<"hasMany", T>;
  hasOne<T extends Tables<TTables>>(to: T, on: { from: Cols<TTables, N>; to: Cols<TTables, T> }): RelationDef<"hasOne", T>;
  belongsTo<T extends Tables<TTables>>(
    to: T,
    on: { from: Cols<TTables, N>; to: Cols<TTables, T> },
  ): RelationDef<"belongsTo", T>;
  /** `via` is the pivot table; `pivotFrom` references `from` on this side, `pivotTo` references `to`. */
  manyToMany<T extends Tables<TTables>, V extends Tables<TTables>>(
    to: T,
    via: V,
    on: { from: Cols<TTables, N>; to: Cols<TTables, T>; pivotFrom: Cols<TTables, V>; pivotTo: Cols<TTables, V> },
  ): RelationDef<"manyToMany", T>;
}

/** Relation definitions to their type-level states. */
export type DescribeRelations<R> = {
  [K in keyof R]: R[K] extends RelationDef<infer Kind, infer T> ? RelationState<Kind, T> : never;
};

function direct(kind: Exclude<RelationKind, "manyToMany">) {
  return (target: string, on: { from: string; to: string }): RelationDef => ({
    kind,
    target,
    from: on?.from,
    to: on?.to,
  });
}

export const rel: RelationBuilder<any, string> = Object.freeze({
  hasMany: direct("hasMany"),
  hasOne: direct("hasOne"),
  belongsTo: direct("belongsTo"),
  manyToMany: (target: string, via: string, on: { from: string; to: string; pivotFrom: string; pivotTo: string }) => ({
    kind: "manyToMany" as const,
    target,
    via,
    from: on?.from,
    to: on?.to,
    pivotFrom: on?.pivotFrom,
    pivotTo: on?.pivotTo,
  }),
}) as RelationBuilder<any, string>;

/** The stored model of one named relation; optional keys are omitted rather than undefined. */
export function relationModel(table: string, name: string, def: RelationDef): RelationModel {
  const model: RelationModel = { kind: def.kind, name, table, target: def.target, from: def.from, to: def.to };
  if (def.kind !== "manyToMany") return model;
  return { ...model, via: def.via, pivotFrom: def.pivotFrom, pivotTo: def.pivotTo };
}
