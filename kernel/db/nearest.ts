import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { QueryError, isPlainObject } from "./query-error.js";
import { ValueError, encodeValue } from "./values.js";
import { distanceExpression } from "./vector-sql.js";

/**
 * `nearest: { column, vector, k }`: the k rows whose vector column is nearest to `vector`, by the
 * column's distance, nearest first, each with its distance as `_distance`. It is a list of its own
 * order and length, so it takes neither `orderBy`, `take`, `skip` nor `after`; `where` (and so any
 * owner scope and list rule) is ANDed in the same statement, and rows whose vector is null are left
 * out. With an HNSW index the search is approximate (pgvector's `hnsw.ef_search`, 40 by default,
 * bounds how many candidates it looks at), exact without one.
 */

/** The key every row of a `nearest` list carries: the distance from the searched vector. */
export const DISTANCE = "_distance";

/** At most this many rows per search on `db.query` (resources bound k by their list limit). */
export const MAX_NEAREST = 1000;

export interface NearestPlan {
  readonly column: string;
  readonly k: number;
  /** The distance of the row `qualifier` from the searched vector. */
  distance(qualifier: string): RawBuilder<number>;
  /** Rows without a vector have no distance. */
  present(qualifier: string): RawBuilder<SqlBool>;
}

const KEYS = new Set(["column", "vector", "k"]);
const EXCLUSIVE = ["orderBy", "take", "skip", "after"] as const;

export function planNearest(kind: DatabaseKind, table: TableModel, args: Record<string, unknown>): NearestPlan {
  const nearest = args.nearest;
  if (!isPlainObject(nearest)) throw new QueryError("nearest", "expected { column, vector, k }");
  for (const key of Object.keys(nearest)) if (!KEYS.has(key)) throw new QueryError(`nearest.${key}`, "unknown argument (use column, vector, k)");
  const vectors = Object.keys(table.columns).filter((name) => table.columns[name]!.type === "vector");
  const column = nearest.column;
  if (typeof column !== "string" || !vectors.includes(column)) {
    const known = vectors.length ? `use ${vectors.join(", ")}` : `table "${table.name}" has no vector column`;
    throw new QueryError("nearest.column", `expected a vector column (${known})`);
  }
  if (kind !== "postgres") throw new QueryError("nearest", "vector search needs the PostgreSQL family (pgvector)");
  if (Object.hasOwn(table.columns, DISTANCE)) throw new QueryError("nearest", `table "${table.name}" has a column named ${DISTANCE}, the key nearest answers with`);
  const model = table.columns[column]!;
  let vector: string;
  try {
    vector = encodeValue(kind, model, nearest.vector) as string;
  } catch (error) {
    if (error instanceof ValueError) throw new QueryError("nearest.vector", error.message);
    throw error;
  }
  const k = nearest.k;
  if (typeof k !== "number" || !Number.isInteger(k) || k < 1 || k > MAX_NEAREST) {
    throw new QueryError("nearest.k", `expected a whole number from 1 to ${MAX_NEAREST}`);
  }
  for (const key of EXCLUSIVE) {
    if (args[key] !== undefined && args[key] !== null) {
      throw new QueryError(key, `not with nearest, which orders by distance and answers k rows (${key === "take" ? "use nearest.k" : "leave it out"})`);
    }
  }
  const distance = model.vector!.distance;
  return {
    column,
    k,
    distance: (qualifier) => distanceExpression(qualifier, column, distance, vector),
    present: (qualifier) => sql<SqlBool>`${sql.id(qualifier, column)} is not null`,
  };
}
