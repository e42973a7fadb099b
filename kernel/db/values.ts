import type { ColumnModel, ColumnType } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { toDay, toInstant } from "./dates.js";

/**
 * How each column type travels between JavaScript and each database family.
 *
 * In process a column has one shape whatever the family (the SPEC select types): numbers for
 * serial/integer/real, strings for text/varchar/uuid/bigint/decimal, booleans, `Date` for timestamp
 * (an instant) and date (UTC midnight of the day), parsed JSON for jsonb, a plain `Uint8Array` for
 * bytes. SQLite stores timestamps as ISO-8601 UTC text with milliseconds (`2024-01-02T03:04:05.678Z`)
 * so that text order is time order, dates as `YYYY-MM-DD`, booleans as 0/1 and JSON as text.
 */

/** A value that does not fit its column; `where` and the query API turn it into a 400. */
export class ValueError extends TypeError {
  override readonly name = "ValueError";
}

const INTEGER_TEXT = /^-?\d+$/;
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL_TEXT = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const INT64_MAX = 9223372036854775807n;
const JSON_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * Checks `value` against the column type and returns what the driver of `kind` should bind.
 * `null` and `undefined` become `null`. Throws `ValueError` for a value of the wrong type.
 */
export function encodeValue(kind: DatabaseKind, column: ColumnModel, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case "serial":
    case "integer":
      // 32-bit, as Postgres stores them; SQLite is held to the same range so both agree.
      if (typeof value === "number" && Number.isInteger(value) && value >= -2_147_483_648 && value <= 2_147_483_647) return value;
      throw mismatch(column.type, "a 32-bit integer", value);
    case "real":
      if (typeof value === "number" && Number.isFinite(value)) return value;
      throw mismatch(column.type, "a finite number", value);
    case "text":
    case "varchar":
      if (typeof value !== "string") throw mismatch(column.type, "a string", value);
      // Postgres cannot store NUL in text; refuse it on both families alike.
      if (value.includes("\u0000")) throw new ValueError(`expected ${column.type} without NUL characters`);
      return value;
    case "uuid":
      // Checked here so a malformed uuid is the caller's 400 on both families, not a Postgres 500
      // on one and a silent non-match on the other.
      if (typeof value === "string" && UUID_TEXT.test(value)) return value;
      throw mismatch(column.type, "a uuid string", value);
    case "boolean":
      if (typeof value !== "boolean") throw mismatch(column.type, "a boolean", value);
      return kind === "sqlite" ? (value ? 1 : 0) : value;
    case "bigint":
      return encodeBigint(kind, value);
    case "decimal":
      // An exponent past ±1000 overflows Postgres numeric and reads as Infinity on SQLite.
      if (typeof value === "string" && DECIMAL_TEXT.test(value) && Math.abs(Number(/[eE]([-+]?\d+)$/.exec(value)?.[1] ?? 0)) <= 1000) return value;
      if (typeof value === "number" && Number.isFinite(value)) return String(value);
      throw mismatch(column.type, "a decimal string", value);
    case "timestamp": {
      const instant = toInstant(value);
      if (!instant) throw mismatch(column.type, "a Date or an ISO-8601 string in years 0001 to 9999", value);
      // pg and PGlite both bind a Date as an exact instant; SQLite keeps the sortable ISO text.
      return kind === "sqlite" ? instant.toISOString() : instant;
    }
    case "date": {
      // Text on both families: pg would bind a Date as local midnight of the server's zone.
      const day = toDay(value);
      if (day === undefined) throw mismatch(column.type, "a Date or a YYYY-MM-DD string in years 0001 to 9999", value);
      return day;
    }
    case "jsonb":
      // Text on both families: pg turns a JS array into a Postgres array literal, while pg and PGlite
      // both pass a string through to jsonb verbatim.
      return encodeJson(value);
    case "vector":
      return encodeVector(column, value);
    case "bytes":
      if (!(value instanceof Uint8Array)) throw mismatch(column.type, "a Uint8Array", value);
      // better-sqlite3 binds only Buffers as blobs; a Buffer is a Uint8Array for pg and PGlite too.
      return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
}

function encodeBigint(kind: DatabaseKind, value: unknown): unknown {
  let text: string | undefined;
  if (typeof value === "string" && INTEGER_TEXT.test(value)) text = value;
  else if (typeof value === "bigint") text = value.toString();
  else if (typeof value === "number" && Number.isSafeInteger(value)) text = String(value);
  const big = text === undefined ? undefined : BigInt(text);
  if (big === undefined || big > INT64_MAX || big < -INT64_MAX - 1n) throw mismatch("bigint", "a 64-bit integer string", value);
  // better-sqlite3 binds a BigInt exactly as an integer; Postgres parses the text itself.
  return kind === "sqlite" ? big : big.toString();
}

/** pgvector's text form, `[1,2,3]`: exactly the column's length of finite numbers. */
function encodeVector(column: ColumnModel, value: unknown): string {
  const dimensions = column.vector!.dimensions;
  if (!Array.isArray(value) || value.length !== dimensions || !value.every((n) => typeof n === "number" && Number.isFinite(n))) {
    throw mismatch("vector", `an array of ${dimensions} finite numbers`, value);
  }
  return JSON.stringify(value);
}

function encodeJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined; // cycles and BigInts
  }
  if (text === undefined) throw mismatch("jsonb", "a JSON value", value);
  // PostgreSQL's jsonb cannot hold NUL (`\u0000` not after an escaping backslash): refused on both families alike.
  if (JSON_NUL.test(text)) throw new ValueError("expected jsonb without NUL characters");
  return text;
}

function mismatch(type: ColumnType, expected: string, value: unknown): ValueError {
  return new ValueError(`expected ${expected} for a ${type} column, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value instanceof Date) return "a Date";
  if (value instanceof Uint8Array) return "bytes";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  return typeof value === "bigint" ? `${value}n` : String(value);
}

export { decodeRow, decodeValue } from "./decode.js";
