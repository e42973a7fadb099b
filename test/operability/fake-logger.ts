import type { Logger } from "../../kernel/index.js";

export interface LogLine {
  level: "info" | "warn" | "error";
  fields: Record<string, any>;
  message: string | undefined;
}

/** A pino-shaped logger that keeps every line (with its child bindings) for a test to read. */
export function fakeLogger(lines: LogLine[] = [], bindings: Record<string, unknown> = {}): Logger & { lines: LogLine[] } {
  const at =
    (level: LogLine["level"]) =>
    (fields: object | string, message?: string) => {
      if (typeof fields === "string") lines.push({ level, fields: { ...bindings }, message: fields });
      else lines.push({ level, fields: { ...bindings, ...fields }, message });
    };
  return {
    lines,
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (more) => fakeLogger(lines, { ...bindings, ...more }),
  };
}
