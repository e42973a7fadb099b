/**
 * How deep JSON bound for the database may nest. PostgreSQL parses and prints `jsonb` recursively,
 * and the embedded database's thread hands rows over by structured clone, which gives up on values
 * nested a couple of thousand levels deep: one such value held the single connection forever.
 * Every path that writes JSON (column inputs, parameters of any statement, job data) is held to
 * this bound, so the answer is a 400 naming it.
 */
export const MAX_JSON_DEPTH = 64;

/** True when `value` (objects and arrays) nests more than `limit` levels; stops counting there. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value) || value instanceof Date) return false;
  if (limit === 0) return true;
  for (const key in value) if (nestedDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

/** The message every refusal uses, after the name of what was too deep. */
export const TOO_DEEP = `nested more than ${MAX_JSON_DEPTH} levels deep`;
