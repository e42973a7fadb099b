/**
 * Parsing of the two calendar types. Timestamps are instants; a `date` is a calendar day, held in
 * process as the Date at UTC midnight of that day (DESIGN.md section 13) so it never shifts with the
 * server's time zone.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// SQLite's own CURRENT_TIMESTAMP form (`2024-01-02 03:04:05`): no zone, meaning UTC.
const ZONELESS = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
const ISO_LIKE = /^[-+]?\d{4,6}-\d{2}-\d{2}/;

/** A Date or an ISO-8601 string (zoneless text means UTC, as SQLite writes it). */
export function toInstant(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== "string") return undefined;
  // Only ISO-like text: V8 also accepts `new Date("1")`, which would hide a caller's mistake.
  if (!ISO_LIKE.test(value)) return undefined;
  const zoneless = ZONELESS.exec(value);
  const parsed = new Date(zoneless ? `${zoneless[1]}T${zoneless[2]}Z` : value);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

/** `YYYY-MM-DD` of a Date (its UTC day), of a `YYYY-MM-DD` string, or of an ISO timestamp string. */
export function toDay(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString().slice(0, 10);
  if (typeof value !== "string") return undefined;
  if (DATE_ONLY.test(value)) {
    const date = new Date(`${value}T00:00:00Z`);
    // Rejects 2024-02-31, which Date would silently roll over into March.
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value) ? value : undefined;
  }
  const instant = toInstant(value);
  return instant ? instant.toISOString().slice(0, 10) : undefined;
}

/** The in-process form of a calendar day: UTC midnight. */
export function dayToDate(day: string): Date {
  return new Date(`${day.slice(0, 10)}T00:00:00.000Z`);
}
