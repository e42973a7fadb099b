import { processEnv } from "../runtime/environment.js";
import { formatJson, formatPretty, isTerminal, type Level } from "./format.js";

/** One logging method, pino's shape: fields first and a message, or a message alone. */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * What the `logger` option takes: pino, or anything with its `info/warn/error/child` shape. `child`
 * returns a logger that adds its bindings to every line.
 */
export interface Logger {
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

/**
 * The `logger` option: a logger, `false` for none, or the built-in one in a given format.
 * Left out, the built-in logger is used (pretty in a terminal, JSON lines when the output is not a
 * terminal or `NODE_ENV=production`), except under a test runner, where there is none. The lines go
 * to stdout, or to stderr with `TRELLIS_LOG_STREAM=stderr` (as under the `trellis` command).
 */
export type LoggerOption = Logger | false | "pretty" | "json";

/** The app's logger for an option, or undefined when logging is off. */
export function resolveLogger(option: LoggerOption | undefined, env: Record<string, string | undefined> = processEnv()): Logger | undefined {
  if (option === false) return undefined;
  if (typeof option === "object") return option;
  if (option === undefined && underTestRunner(env)) return undefined;
  const format = option ?? (isTerminal() && env.NODE_ENV !== "production" ? "pretty" : "json");
  // Runtimes without `process` (edge workers) have a console but no stdout. `TRELLIS_LOG_STREAM=stderr`
  // keeps stdout for a command's own output: the CLI sets it before it loads the app.
  const stream = env.TRELLIS_LOG_STREAM === "stderr" ? "stderr" : "stdout";
  const write = typeof process === "undefined" ? (line: string) => console.log(line.trimEnd()) : (line: string) => void process[stream].write(line);
  return new ConsoleLogger(format, write);
}

/** Vitest, Jest, `node --test`, or `NODE_ENV=test`: request lines would drown the test output. */
export function underTestRunner(env: Record<string, string | undefined> = processEnv()): boolean {
  return env.NODE_ENV === "test" || env.VITEST !== undefined || env.JEST_WORKER_ID !== undefined || env.NODE_TEST_CONTEXT !== undefined;
}

/** The built-in logger: one line per call, pino's JSON fields, or a readable line for a terminal. */
export class ConsoleLogger implements Logger {
  constructor(
    readonly format: "pretty" | "json",
    readonly write: (line: string) => void,
    readonly bindings: Readonly<Record<string, unknown>> = {},
  ) {}

  readonly info: LogFn = (fields: object | string, message?: string) => this.#log(30, fields, message);
  readonly warn: LogFn = (fields: object | string, message?: string) => this.#log(40, fields, message);
  readonly error: LogFn = (fields: object | string, message?: string) => this.#log(50, fields, message);

  child(bindings: Record<string, unknown>): Logger {
    return new ConsoleLogger(this.format, this.write, { ...this.bindings, ...bindings });
  }

  #log(level: Level, fields: object | string, message: string | undefined): void {
    const [record, msg] = typeof fields === "string" ? [{}, fields] : [fields as Record<string, unknown>, message];
    const all = { ...this.bindings, ...record };
    this.write(this.format === "json" ? formatJson(level, all, msg) : formatPretty(level, all, msg));
  }
}
