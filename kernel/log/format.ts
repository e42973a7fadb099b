import { errorFields, describeError } from "./describe-error.js";

/** pino's level numbers, so the JSON lines read like pino's. */
export type Level = 30 | 40 | 50;

const NAMES: Record<Level, string> = { 30: "INFO", 40: "WARN", 50: "ERROR" };
const COLORS: Record<Level, string> = { 30: "\x1b[32m", 40: "\x1b[33m", 50: "\x1b[31m" };
const DIM = "\x1b[2m";
const RESET = "\x1b[0m";

/** Fields a request line already shows in its message; the pretty format does not repeat them. */
const SHOWN_IN_MESSAGE = new Set(["method", "path", "status", "durationMs"]);

/** One JSON line with pino's `level`, `time` and `msg`; errors under `err` as `{ type, message, stack, ... }`. */
export function formatJson(level: Level, fields: Record<string, unknown>, message: string | undefined): string {
  const record: Record<string, unknown> = { level, time: Date.now() };
  for (const [key, value] of Object.entries(fields)) record[key] = value instanceof Error ? errorFields(value) : value;
  if (message !== undefined) record.msg = message;
  return `${JSON.stringify(record, jsonSafe)}\n`;
}

/** True when the output is a terminal (never on runtimes without \`process\`). */
export function isTerminal(): boolean {
  return typeof process !== "undefined" && process.stdout?.isTTY === true;
}

/** `12:00:01.123 INFO  message  key=value ...`, an error's stack and causes on the lines below. */
export function formatPretty(level: Level, fields: Record<string, unknown>, message: string | undefined): string {
  const time = new Date().toISOString().slice(11, 23);
  const color = isTerminal() ? COLORS[level] : "";
  const reset = color ? RESET : "";
  const dim = color ? DIM : "";
  const pairs: string[] = [];
  const errors: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || (message && SHOWN_IN_MESSAGE.has(key))) continue;
    if (value instanceof Error) errors.push(describeError(value));
    else pairs.push(`${key}=${typeof value === "string" ? value : JSON.stringify(value, jsonSafe)}`);
  }
  const head = `${dim}${time}${reset} ${color}${NAMES[level].padEnd(5)}${reset} ${message ?? ""}${pairs.length ? `  ${dim}${pairs.join(" ")}${reset}` : ""}`;
  return [head, ...errors.map((text) => indent(text))].join("\n") + "\n";
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

/** bigint as a string, and no throw on what JSON cannot hold. */
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
