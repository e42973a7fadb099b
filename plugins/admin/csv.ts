/**
 * CSV as RFC 4180 writes it: fields separated by commas, records by CRLF, a field holding a quote,
 * comma, CR or LF wrapped in quotes with its quotes doubled.
 *
 * Safe to open in a spreadsheet: a text cell starting with `=`, `+`, `-`, `@`, a tab or a CR would
 * be read as a formula (OWASP's "CSV injection"), so it gets a leading `'`, which spreadsheets show
 * as text. Numbers and booleans are written as they are (`-5` is a number, never a formula).
 */
export function csvRecord(values: readonly unknown[]): string {
  return `${values.map(csvField).join(",")}\r\n`;
}

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text: string;
  if (typeof value === "string") text = FORMULA_START.test(value) ? `'${value}` : value;
  else if (typeof value === "object") return csvField(JSON.stringify(value));
  else text = String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
