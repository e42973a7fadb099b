import { STANDARD_RPC_JSON_SERIALIZER_BUILT_IN_TYPES as BUILT_IN, type StandardRPCJsonSerializer } from "@orpc/client/standard";
import type { TableModel } from "../schema/model.js";
import { BYTES_TYPE_ID, toBase64 } from "./custom-json.js";

/**
 * The RPC wire encoding of resource rows, compiled once per table from its columns. oRPC's generic
 * serializer asks a dozen questions of every value (a custom type? a Blob, a bigint, a Date, NaN,
 * a URL, a RegExp, a Set, a Map, an array, a plain object?) and copies the path array for each;
 * here the table says which columns can carry a Date (`timestamp`, `date`) or bytes, and the rest
 * are copied after one `typeof`. The output is byte for byte what the generic serializer gives:
 * any value that is not what its column promises (a key added by an include or by middleware, a
 * `jsonb` value) is handed to the generic serializer at its own path, so the meta (the type of each
 * non-JSON value, by path) comes out the same, in the same order.
 */

type Segment = string | number;
type Meta = [number, ...Segment[]][];
type Row = Record<string, unknown>;
/** The four accumulators of oRPC's JSON serializer, threaded through as it does. */
type Sink = { meta: Meta; maps: Segment[][]; blobs: Blob[]; generic: StandardRPCJsonSerializer };
type Encode = (value: unknown, sink: Sink) => unknown;

const PLAIN = 0;
const INSTANT = 1;
const BYTES = 2;
/** Any JSON value: the generic serializer walks it (a nested Date or a `__proto__` key included). */
const NESTED = 3;

export interface RowEncoder {
  /** Marks `row` (a get, create, update or delete answer) to be encoded by this table's encoder. */
  one<T extends object | undefined>(row: T): T;
  /** Marks `rows` (a list answer). */
  many<T extends readonly object[]>(rows: T): T;
  /** Marks a page (`{ items, nextCursor }`). */
  page<T extends { items: readonly object[] }>(page: T): T;
}

const marked = new WeakMap<object, Encode>();

/** The compiled encoder of `table`, if `value` was marked with one (by identity: a replaced value is not). */
export function markedEncoder(value: unknown): Encode | undefined {
  return typeof value === "object" && value !== null ? marked.get(value) : undefined;
}

export function compileRowEncoder(table: TableModel): RowEncoder {
  const kinds: Record<string, number> = Object.create(null);
  for (const [name, column] of Object.entries(table.columns)) {
    kinds[name] =
      column.type === "timestamp" || column.type === "date" ? INSTANT : column.type === "bytes" ? BYTES : column.type === "jsonb" ? NESTED : PLAIN;
  }

  const encodeRow = (row: Row, path: Segment[], sink: Sink): Row => {
    const json: Row = {};
    for (const key in row) {
      const value = row[key];
      if (value === null) {
        json[key] = null;
        continue;
      }
      const kind = kinds[key];
      if (kind === PLAIN) {
        const type = typeof value;
        // NaN (a `real` column) is described in the meta: left to the generic serializer below.
        if (type === "string" || type === "boolean" || (type === "number" && value === value)) {
          json[key] = value;
          continue;
        }
      } else if (kind === INSTANT && value instanceof Date) {
        sink.meta.push([BUILT_IN.DATE, ...path, key]);
        json[key] = Number.isNaN(value.getTime()) ? null : value.toISOString();
        continue;
      } else if (kind === BYTES && value instanceof Uint8Array) {
        json[key] = toBase64(value);
        sink.meta.push([BYTES_TYPE_ID, ...path, key]);
        continue;
      }
      // oRPC skips a function named toJSON (JSON.stringify would call it).
      if (key === "toJSON" && typeof value === "function") continue;
      json[key] = fallback(value, path, key, sink);
    }
    return json;
  };

  const encodeRows = (rows: readonly unknown[], path: Segment[], sink: Sink): unknown[] => {
    const json = new Array<unknown>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (isPlainRow(row)) json[i] = encodeRow(row, [...path, i], sink);
      // An undefined item is null plus a meta entry; a hole (which map() skips) stays a hole.
      else if (row === undefined) {
        if (i in rows) json[i] = undefinedAt([...path, i], sink);
      } else json[i] = fallback(row, path, i, sink);
    }
    return json;
  };

  const one: Encode = (row, sink) => encodeRow(row as Row, [], sink);
  const many: Encode = (rows, sink) => encodeRows(rows as unknown[], [], sink);
  const page: Encode = (value, sink) => {
    const json: Row = {};
    for (const key in value as Row) {
      const item = (value as Row)[key];
      json[key] = key === "items" && Array.isArray(item) ? encodeRows(item, ["items"], sink) : fallback(item, [], key, sink);
    }
    return json;
  };

  const mark = <T>(value: T, encode: Encode): T => {
    if (isPlainRow(value) || Array.isArray(value)) marked.set(value as object, encode);
    return value;
  };
  return {
    one: (row) => mark(row, one),
    many: (rows) => mark(rows, many),
    page: (value) => (isPlainRow(value) ? (marked.set(value, page), value) : value),
  };
}

function fallback(value: unknown, path: Segment[], key: Segment, sink: Sink): unknown {
  return sink.generic.serialize(value, [...path, key], sink.meta, sink.maps, sink.blobs)[0];
}

/** An array hole or undefined item: null in JSON, restored as undefined by its meta entry. */
function undefinedAt(path: Segment[], sink: Sink): null {
  sink.meta.push([BUILT_IN.UNDEFINED, ...path]);
  return null;
}

/** The objects oRPC walks key by key (its `isObject`): plain, or without a prototype. */
function isPlainRow(value: unknown): value is Row {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || !proto || !proto.constructor;
}
