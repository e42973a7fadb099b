/**
 * Parsing of the two calendar types. Timestamps are instants; a `date` is a calendar day, held in
 * process as the Date at UTC midnight of that day (DESIGN.md section 13) so it never shifts with the
 * server's time zone.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// SQLite's own CURRENT_TIMESTAMP form (`2024-01-02 03:04:05`): no zone, meaning UTC.
const ZONELESS = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
const ISO_LIKE = /^[-+]?\d{4,6}-\d{2}-\d{2}/;

// Years 1 to 9999: what both families store and compare alike (Postgres refuses year 0 and
// time-zone displacements far out; SQLite text would sort them wrongly).
const EARLIEST = new Date("0001-01-01T00:00:00.000Z").getTime();
const LATEST = new Date("9999-12-31T23:59:59.999Z").getTime();
/** Is `date` a valid Date in years 1 to 9999 (what both families store and compare alike). */
export const inRange = (date: Date) => date.getTime() >= EARLIEST && date.getTime() <= LATEST;

/** A Date or an ISO-8601 string (zoneless text means UTC, as SQLite writes it), in years 1 to 9999. */
export function toInstant(value: unknown): Date | undefined {
  if (value instanceof Date) return inRange(value) ? value : undefined;
  if (typeof value !== "string") return undefined;
  // Only ISO-like text: V8 also accepts `new Date("1")`, which would hide a caller's mistake.
  if (!ISO_LIKE.test(value)) return undefined;
  const zoneless = ZONELESS.exec(value);
  const parsed = new Date(zoneless ? `${zoneless[1]}T${zoneless[2]}Z` : value);
  return inRange(parsed) ? parsed : undefined;
}

/** `YYYY-MM-DD` of a Date (its UTC day), of a `YYYY-MM-DD` string, or of an ISO timestamp string. */
export function toDay(value: unknown): string | undefined {
  if (value instanceof Date) return inRange(value) ? value.toISOString().slice(0, 10) : undefined;
  if (typeof value !== "string") return undefined;
  if (DATE_ONLY.test(value)) {
    const date = new Date(`${value}T00:00:00Z`);
    // Rejects 2024-02-31, which Date would silently roll over into March.
    return inRange(date) && date.toISOString().startsWith(value) ? value : undefined;
  }
  const instant = toInstant(value);
  return instant ? instant.toISOString().slice(0, 10) : undefined;
}

/** The in-process form of a calendar day: UTC midnight. */
export function dayToDate(day: string): Date {
  return new Date(`${day.slice(0, 10)}T00:00:00.000Z`);
}
