/**
 * What the PGlite and PostgreSQL dialects share about named prepared statements
 * (pglite-prepared.ts, pg-prepared.ts): one name per statement text, up to a limit.
 */

/**
 * Distinct statement texts kept prepared per database (PGlite) or pool (pg). The generated actions
 * have a few shapes per resource; past this many (ad hoc SQL with inlined values) statements run
 * unnamed, as before.
 */
export const PREPARED_LIMIT = 500;

/**
 * A named statement the server no longer has as it was: `26000` (dropped by DEALLOCATE or DISCARD)
 * or `0A000` "cached plan must not change result type" (its result's columns changed: a migration).
 */
export function isStale(error: unknown): boolean {
  const { code, routine } = (error ?? {}) as { code?: string; routine?: string };
  // The plan's check is named by its source routine, which a translated message (lc_messages) keeps.
  return code === "26000" || (code === "0A000" && (routine === "RevalidateCachedQuery" || /cached plan must not change result type/.test(String((error as Error).message))));
}
