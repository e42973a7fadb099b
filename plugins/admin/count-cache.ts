/**
 * Row counts of `_admin.data.list`, remembered per table and `where`. A count walks every matching
 * row (4 to 5 ms for 10,000 rows on the embedded database, several times the page itself), and the
 * dashboard asks the same count again on every page turn. Entries are dropped when the kernel's
 * `changed` hook reports a committed write to their table, so a count is exact for writes made
 * through this app; `ttlMs` bounds how stale it can be after writes made elsewhere (another
 * replica, another program on the same database).
 */
export interface CountCache {
  /** The remembered count, or a fresh one from `count()` (remembered unless the table changed meanwhile). */
  count(table: string, where: unknown, count: () => Promise<number>): Promise<number>;
  /** Forgets every count of `table`. */
  changed(table: string): void;
}

export function countCache({ ttlMs = 5_000, max = 500 } = {}): CountCache {
  const entries = new Map<string, { value: number; at: number }>();
  /** Bumped on each change, so a count that raced a write is not remembered. */
  const generations = new Map<string, number>();
  return {
    async count(table, where, count) {
      const key = `${table}\u0000${JSON.stringify(where ?? {})}`;
      const hit = entries.get(key);
      if (hit && performance.now() - hit.at < ttlMs) return hit.value;
      const generation = generations.get(table) ?? 0;
      const value = await count();
      if ((generations.get(table) ?? 0) === generation) {
        if (entries.size >= max) entries.delete(entries.keys().next().value!);
        entries.set(key, { value, at: performance.now() });
      }
      return value;
    },
    changed(table) {
      generations.set(table, (generations.get(table) ?? 0) + 1);
      for (const key of entries.keys()) if (key.startsWith(`${table}\u0000`)) entries.delete(key);
    },
  };
}
