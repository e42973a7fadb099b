import { z } from "zod";
import type { VectorDistance } from "./model.js";

/**
 * The rules of `t.vector(dimensions)`. pgvector stores at most 16,000 dimensions in a `vector` and
 * indexes at most 2,000 with HNSW; both are checked where the column is declared, so a schema that
 * could not be migrated never builds.
 */

export const VECTOR_MAX_DIMENSIONS = 16_000;
export const VECTOR_MAX_INDEXED_DIMENSIONS = 2_000;
export const VECTOR_DISTANCES: readonly VectorDistance[] = ["cosine", "l2", "inner"];

export function vectorModel(dimensions: number, distance: VectorDistance = "cosine"): { dimensions: number; distance: VectorDistance } {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > VECTOR_MAX_DIMENSIONS) {
    throw new TypeError(`t.vector() needs a whole number of dimensions from 1 to ${VECTOR_MAX_DIMENSIONS}, got ${String(dimensions)}`);
  }
  if (!VECTOR_DISTANCES.includes(distance)) {
    throw new TypeError(`Unknown vector distance ${JSON.stringify(distance)} (use ${VECTOR_DISTANCES.join(", ")})`);
  }
  return Object.freeze({ dimensions, distance });
}

/** Past float4's range pgvector refuses the value; refused here first, as a 400 naming the field. */
const FLOAT4_MAX = 3.4028234663852886e38;

/** A vector's input: exactly `dimensions` finite numbers within float4's range. */
export function vectorInput(dimensions: number): z.ZodType<number[]> {
  return z
    .array(z.number().refine((value) => Number.isFinite(value) && Math.abs(value) <= FLOAT4_MAX, { message: "must be a finite number within float4's range" }))
    .length(dimensions, { message: `must hold exactly ${dimensions} numbers` });
}
