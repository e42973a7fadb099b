import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Where a command's output goes when it runs inside a server for a CLI beside it (control/server.ts):
 * collected for the caller, coloured as the caller's terminal is.
 */
export interface OutputSink {
  write(text: string): void;
  colour: boolean;
}
export const outputSink = new AsyncLocalStorage<OutputSink>();

/** What the CLI prints: colour only on a terminal (and never with NO_COLOR), errors as one block. */
const colour = (stream: NodeJS.WriteStream) => outputSink.getStore()?.colour ?? (Boolean(stream.isTTY) && !process.env.NO_COLOR);

function paint(code: number, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  return colour(stream) ? `\u001b[${code}m${text}\u001b[0m` : text;
}

export const bold = (text: string) => paint(1, text);
export const dim = (text: string) => paint(2, text);
export const green = (text: string) => paint(32, text);
export const yellow = (text: string) => paint(33, text);
export const red = (text: string, stream?: NodeJS.WriteStream) => paint(31, text, stream);

export function say(line = ""): void {
  const sink = outputSink.getStore();
  if (sink) sink.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

/** Rows as aligned columns, the first row a header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  return rows
    .map((row, index) => {
      const line = row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd();
      return index === 0 ? bold(line) : line;
    })
    .join("\n");
}

/** A failure the CLI explains and exits with: a code, what happened, how to fix it. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly fix?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
