/**
 * Comma-separated sets: how `user.role` and `.enum(values, { multiple: true })` columns are stored.
 * A plain text column keeps them portable across Postgres and SQLite and readable by better-auth,
 * which splits `user.role` on commas itself.
 */

/** `"a, b,,c"` → `["a", "b", "c"]`; `null` and `undefined` give `[]`. */
export function parseSet(value: string | null | undefined): string[] {
  if (value === null || value === undefined || value === "") return [];
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/**
 * `["a", "b", "a"]` → `"a,b"`: trimmed, empties dropped, duplicates removed in first-seen order, so
 * `parseSet(toSet(x))` gives back the distinct values. A value containing a comma throws, since it
 * would come back as two.
 */
export function toSet(values: Iterable<string>): string {
  const seen = new Set<string>();
  for (const raw of values) {
    if (typeof raw !== "string") throw new TypeError(`toSet() takes strings, got ${typeof raw}`);
    if (raw.includes(",")) throw new TypeError(`toSet(): "${raw}" contains a comma`);
    const item = raw.trim();
    if (item !== "") seen.add(item);
  }
  return [...seen].join(",");
}
