import type { RelationModel } from "../schema/model.js";

/**
 * At most this many related rows are included per parent row and relation (the first ones by the
 * target's primary key), so one parent with a huge relation cannot blow up a response.
 */
export const INCLUDE_LIMIT = 1000;

/** hasMany and manyToMany give arrays; belongsTo and hasOne an object or null. */
export function isMany(relation: RelationModel): boolean {
  return relation.kind === "hasMany" || relation.kind === "manyToMany";
}

/** The alias of the related table in include subqueries: an include's `where` is compiled against it. */
export const RELATED = "__t";
