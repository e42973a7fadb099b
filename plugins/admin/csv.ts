import type { ColumnType } from "../../kernel/index.js";

/**
 * CSV as RFC 4180 writes it: fields separated by commas, records by CRLF, a field holding a quote,
 * comma, CR or LF wrapped in quotes with its quotes doubled.
 *
 * Safe to open in a spreadsheet: a text cell starting with `=`, `+`, `-`, `@`, a tab or a CR would
 * be read as a formula (OWASP's "CSV injection"), so it gets a leading `'`, which spreadsheets show
 * as text. Numbers and booleans are written as they are (`-5` is a number, never a formula), and so
 * is a string in a field that `text` marks `false` (a column whose values are never free text:
 * `-12.50` of a decimal column, base64 bytes starting with `+`).
 */
export function csvRecord(values: readonly unknown[], text?: readonly boolean[]): string {
  return `${values.map((value, i) => csvField(value, text?.[i] !== false)).join(",")}\r\n`;
}

/**
 * Column types whose values a person writes (text, ids, enums, JSON): the ones a formula can hide
 * in. Numbers, bigint and decimal (strings in JSON), instants, days, base64 bytes and vectors are not.
 */
const FREE_TEXT: ReadonlySet<ColumnType> = new Set(["text", "varchar", "uuid", "jsonb"]);

export function isFreeText(type: ColumnType): boolean {
  return FREE_TEXT.has(type);
}

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

function csvField(value: unknown, guard: boolean): string {
  if (value === null || value === undefined) return "";
  let text: string;
  if (typeof value === "string") text = guard && FORMULA_START.test(value) ? `'${value}` : value;
  else if (typeof value === "object") return csvField(JSON.stringify(value), guard);
  else text = String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
