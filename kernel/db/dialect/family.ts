/**
 * Value rules shared by every database family (DESIGN.md sections 5 and 13), so a row
 * reads the same in process whether it came from PGlite, pg or SQLite:
 * int8 and numeric stay exact strings, timestamps are Dates, a `date` is a Date at UTC
 * midnight, bytea is a plain Uint8Array and json/jsonb arrive parsed.
 *
 * Postgres sends these types as text; the parsers below are handed to PGlite at creation
 * and to pg per query, so neither driver's defaults (pg: local-time dates and Buffers,
 * PGlite: numbers or bigints for int8) leak through. Nothing here imports a driver.
 */

import { MAX_JSON_DEPTH, TOO_DEEP, nestedDeeperThan } from "../json-depth.js";
import { ValueError } from "../values.js";

export type TextParser = (text: string) => unknown;

/** Postgres type oids Trellis parses itself. */
export const oid = {
  bytea: 17,
  int8: 20,
  json: 114,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

/** Array oids whose elements follow the same rules, mapped to their element oid. */
export const arrayElementOid: Readonly<Record<number, number>> = {
  1001: oid.bytea,
  1016: oid.int8,
  199: oid.json,
  1182: oid.date,
  1115: oid.timestamp,
  1185: oid.timestamptz,
  1231: oid.numeric,
  3807: oid.jsonb,
};

const TIMESTAMP =
  /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?( BC)?$/;
const DATE = /^(\d{4,})-(\d\d)-(\d\d)( BC)?$/;

/** Builds a UTC instant; `setUTCFullYear` because `Date.UTC` maps years 0-99 to 19xx. */
function utc(year: number, month: number, day: number, h = 0, mi = 0, s = 0, ms = 0): Date {
  const date = new Date(Date.UTC(2000, month - 1, day, h, mi, s, ms));
  date.setUTCFullYear(year);
  return date;
}

function era(year: string, bc: string | undefined): number {
  // Postgres has no year 0: 1 BC is astronomical year 0.
  return bc ? 1 - Number(year) : Number(year);
}

/**
 * `timestamp` and `timestamptz` text (DateStyle ISO). A value without an offset is read
 * as UTC, never as the process's local time, so the result does not depend on `TZ`.
 * `infinity` has no Date; it becomes an invalid Date rather than a wrong one.
 */
export function parseTimestamp(text: string): Date {
  const m = TIMESTAMP.exec(text);
  if (!m) return new Date(Number.NaN);
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
  const date = utc(era(m[1]!, m[12]), +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms);
  if (m[8]) {
    const offset = (+m[9]! * 3600 + +(m[10] ?? 0) * 60 + +(m[11] ?? 0)) * 1000;
    date.setTime(date.getTime() - (m[8] === "+" ? offset : -offset));
  }
  return date;
}

/** `date` text: a calendar day, carried as that day's UTC midnight. */
export function parseCalendarDate(text: string): Date {
  const m = DATE.exec(text);
  return m ? utc(era(m[1]!, m[4]), +m[2]!, +m[3]!) : new Date(Number.NaN);
}

/** `bytea` text, hex format (the default `bytea_output`) or the older escape format. */
export function parseBytea(text: string): Uint8Array {
  // Copied out of the Buffer: small Buffers are views into a shared pool.
  if (text.startsWith("\\x")) return new Uint8Array(Buffer.from(text.slice(2), "hex"));
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "\\") {
      out.push(text.charCodeAt(i));
    } else if (text[i + 1] === "\\") {
      out.push(0x5c);
      i += 1;
    } else {
      out.push(parseInt(text.slice(i + 1, i + 4), 8)); // \ooo
      i += 3;
    }
  }
  return Uint8Array.from(out);
}

const exact: TextParser = (text) => text;
const json: TextParser = (text) => JSON.parse(text);

/** The text parsers by oid for scalar types: the wire rules in one table. */
const scalarParsers: Readonly<Record<number, TextParser>> = {
  [oid.bytea]: parseBytea,
  [oid.int8]: exact,
  [oid.numeric]: exact,
  [oid.json]: json,
  [oid.jsonb]: json,
  [oid.date]: parseCalendarDate,
  [oid.timestamp]: parseTimestamp,
  [oid.timestamptz]: parseTimestamp,
};

/**
 * A Postgres array literal (`{1,NULL,"a \\"b\\""}`, nested, with an optional
 * `[lo:hi]=` prefix), each element through `element`. pg's own array parsers would use its
 * global element parsers, not these.
 */
export function parseArray(text: string, element: TextParser): unknown[] {
  let i = text.startsWith("[") ? text.indexOf("=") + 1 : 0;
  const list = (): unknown[] => {
    const out: unknown[] = [];
    for (i++; i < text.length; ) {
      const c = text[i];
      if (c === "}") {
        i++;
        return out;
      }
      if (c === ",") i++;
      else if (c === "{") out.push(list());
      else if (c === '"') {
        let value = "";
        for (i++; text[i] !== '"'; i++) value += text[i] === "\\" ? text[++i] : text[i];
        i++;
        out.push(element(value));
      } else {
        const start = i;
        while (text[i] !== "," && text[i] !== "}") i++;
        const raw = text.slice(start, i);
        out.push(raw === "NULL" ? null : element(raw));
      }
    }
    return out;
  };
  return list();
}

/** Every parser Trellis installs, scalars and their arrays, by oid. */
export const textParsers: Readonly<Record<number, TextParser>> = {
  ...scalarParsers,
  ...Object.fromEntries(
    Object.entries(arrayElementOid).map(([array, element]) => [
      array,
      (text: string) => parseArray(text, scalarParsers[element]!),
    ]),
  ),
};

/**
 * PGlite creation options carrying these rules. The bytea serializer hands the bytes over
 * untouched: PGlite binds a Uint8Array in binary format, where its default would spell out
 * a hex string one byte at a time (slow for uploads). The price: a `bytea[]` parameter
 * cannot be bound (PGlite's array serializer expects strings); Trellis has no such column.
 */
export const pgliteTypeOptions = {
  parsers: textParsers as Record<number, (text: string) => unknown>,
  serializers: { [oid.bytea]: (value: unknown) => value as string },
};

/**
 * Parameters for Postgres (pg and PGlite). A Date goes as an ISO string: pg would
 * otherwise send local time, which a `timestamp` column stores as wall-clock time and
 * which would then read back shifted by the process's offset.
 */
/**
 * Refuses (a `ValueError`, so a 400 in a procedure) an object or array parameter nested past
 * `MAX_JSON_DEPTH`: JSON reaching a `jsonb` column through any statement, the query API or raw
 * Kysely in user code alike, on every family.
 */
export function refuseDeepParameters(parameters: readonly unknown[]): void {
  for (const value of parameters) {
    if (typeof value === "object" && value !== null && nestedDeeperThan(value, MAX_JSON_DEPTH)) throw new ValueError(`expected a JSON value ${TOO_DEEP}`);
  }
}

export function toPostgresParameter(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toPostgresParameter);
  return value;
}

/**
 * Parameters for SQLite, which binds only numbers, strings, bigints, buffers and null:
 * a Date becomes its ISO string, a boolean 1 or 0, a plain object or array its JSON text
 * (how `jsonb` columns are stored there).
 */
export function toSqliteParameter(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return value;
  return JSON.stringify(value);
}

/** SQLite hands BLOBs back as Buffers; other families give plain Uint8Arrays. */
export function toPlainBytes<R>(row: R): R {
  const record = row as Record<string, unknown>;
  for (const key in record) {
    const value = record[key];
    if (Buffer.isBuffer(value)) record[key] = new Uint8Array(value);
  }
  return row;
}
