import type { ColumnModel, ColumnType, TableModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { dayToDate, toInstant } from "./dates.js";

/**
 * Output side of the value codec (see values.ts): whatever a driver returns for a column (pg,
 * PGlite, better-sqlite3, or JSON built by Postgres for an include) becomes the SPEC select type.
 * Decoders accept every raw shape any family produces, so the same row reads the same everywhere.
 */

type Decoder = (raw: unknown) => unknown;

// bigint and decimal stay exact as text; a number here is already exact (the query API casts
// SQLite's 64-bit integers to text, and PGlite only returns numbers inside the safe range).
const asExactText: Decoder = (raw) => (typeof raw === "string" ? raw : String(raw));

const asBoolean: Decoder = (raw) => {
  if (typeof raw === "boolean") return raw;
  if (typeof raw === "number" || typeof raw === "bigint") return raw !== 0 && raw !== 0n;
  return raw === "t" || raw === "true" || raw === "1";
};

const asInstant: Decoder = (raw) => {
  if (typeof raw === "string" && hasZone(raw)) {
    // The common case (Postgres JSON, Trellis' SQLite text): an ISO instant Date parses exactly.
    const date = new Date(raw);
    if (!Number.isNaN(date.getTime())) return date;
  }
  if (typeof raw === "number") return new Date(raw);
  return toInstant(raw) ?? raw;
};

/** `...T...Z` or `...T...+01:00`: the zone is explicit, so `new Date` cannot read it as local time. */
function hasZone(text: string): boolean {
  if (text.length < 20 || text[10] !== "T") return false;
  const sign = text[text.length - 6];
  return text.endsWith("Z") || ((sign === "+" || sign === "-") && text[text.length - 3] === ":");
}

const asDay: Decoder = (raw) => {
  if (typeof raw === "string") return dayToDate(raw);
  if (!(raw instanceof Date)) return raw;
  const utcMidnight = raw.getUTCHours() === 0 && raw.getUTCMinutes() === 0 && raw.getUTCSeconds() === 0;
  // pg parses a `date` as local midnight; PGlite as UTC midnight. Both mean the same calendar day.
  return utcMidnight ? raw : new Date(Date.UTC(raw.getFullYear(), raw.getMonth(), raw.getDate()));
};

const asBytes: Decoder = (raw) => {
  if (raw instanceof Uint8Array) {
    // A Buffer is a Uint8Array subclass; hand out the plain type so results compare equal everywhere.
    return raw.constructor === Uint8Array ? raw : new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  }
  // Postgres JSON renders bytea as `\x0102ff`.
  if (typeof raw === "string" && raw.startsWith("\\x")) return new Uint8Array(Buffer.from(raw.slice(2), "hex"));
  return raw;
};

// Postgres JSON spells the non-finite doubles as strings ("NaN", "Infinity").
const asNumber: Decoder = (raw) => (typeof raw === "string" ? Number(raw) : raw);

const parseJsonText: Decoder = (raw) => (typeof raw === "string" ? JSON.parse(raw) : raw);
const identity: Decoder = (raw) => raw;

function decoderFor(kind: DatabaseKind, type: ColumnType): Decoder | undefined {
  switch (type) {
    case "real":
      return kind === "postgres" ? asNumber : undefined;
    // Every driver already returns these as JS numbers and strings.
    case "serial":
    case "integer":
    case "text":
    case "varchar":
    case "uuid":
      return undefined;
    case "bigint":
    case "decimal":
      return asExactText;
    case "boolean":
      return kind === "sqlite" ? asBoolean : undefined;
    case "timestamp":
      return asInstant;
    case "date":
      return asDay;
    // Postgres drivers parse jsonb already (a JSON string value arrives as a JS string, not as text).
    case "jsonb":
      return kind === "sqlite" ? parseJsonText : undefined;
    case "bytes":
      return asBytes;
    // pgvector's text form `[1,2,3]` is a JSON array.
    case "vector":
      return parseJsonText;
  }
}

/** The in-process value of one raw column value. */
export function decodeValue(kind: DatabaseKind, column: ColumnModel, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  return (decoderFor(kind, column.type) ?? identity)(raw);
}

export type RowDecoder = (row: Record<string, unknown>) => Record<string, unknown>;
export type TupleDecoder = (values: readonly unknown[]) => Record<string, unknown>;

type Steps = ReadonlyArray<readonly [name: string, decode: Decoder | undefined]>;

const cache = { postgres: new WeakMap<TableModel, Steps>(), sqlite: new WeakMap<TableModel, Steps>() };

/** Each column of `table` in model order with its decoder, computed once per table and family. */
function stepsOf(kind: DatabaseKind, table: TableModel): Steps {
  let steps = cache[kind].get(table);
  if (!steps) {
    steps = Object.entries(table.columns).map(([name, column]) => [name, decoderFor(kind, column.type)] as const);
    cache[kind].set(table, steps);
  }
  return steps;
}

/**
 * A decoder for rows of `table` that visits only the columns whose raw form differs from the
 * in-process one. It rewrites the row in place (rows are fresh driver objects) and leaves keys that
 * are not columns untouched.
 */
export function rowDecoder(kind: DatabaseKind, table: TableModel): RowDecoder {
  const steps = stepsOf(kind, table).filter(([, decode]) => decode !== undefined) as [string, Decoder][];
  return (row) => {
    for (const [name, decode] of steps) {
      const raw = row[name];
      if (raw !== null && raw !== undefined) row[name] = decode(raw);
    }
    return row;
  };
}

/** A decoder from a positional tuple of column values (model order) to a row object. */
export function tupleDecoder(kind: DatabaseKind, table: TableModel): TupleDecoder {
  const steps = stepsOf(kind, table);
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < steps.length; i++) {
      const [name, decode] = steps[i]!;
      const raw = values[i] ?? null;
      row[name] = raw === null || !decode ? raw : decode(raw);
    }
    return row;
  };
}

/** A raw row of `table` in its in-process types (in place; see `rowDecoder`). */
export function decodeRow<R extends Record<string, unknown>>(kind: DatabaseKind, table: TableModel, row: R): R {
  return rowDecoder(kind, table)(row) as R;
}
