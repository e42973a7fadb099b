import type { SchemaModel, TableModel } from "../../kernel/index.js";

export interface AuditConfig {
  /**
   * The tables whose writes are recorded.
   * @default every table of the latest schema except `session` and `verification` (written at every
   * sign-in, and holding nothing but credentials)
   */
  tables?: readonly string[];
  /**
   * Tables left out of the default set (or of `tables`).
   * @default []
   */
  exclude?: readonly string[];
  /**
   * How long entries are kept: a number and a unit, `d` (days), `h` (hours) or `m` (minutes), such
   * as `"90d"`. Older entries are deleted by an hourly sweep (a cron job when the app has `.jobs()`).
   * @default entries are kept until deleted by hand
   */
  retain?: string;
}

/** Tables the default set leaves out: written at every sign-in, holding only credentials. */
const NOISY = new Set(["session", "verification"]);

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `"90d"` in milliseconds; undefined when the text is not a duration. */
export function parseRetain(text: string): number | undefined {
  const match = /^(\d{1,6})([dhm])$/.exec(text.trim());
  if (!match || Number(match[1]) === 0) return undefined;
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** The audited tables of `schema`, and the names of `tables`/`exclude` that are not in it. */
export function auditedTables(schema: SchemaModel, config: AuditConfig): { tables: TableModel[]; unknown: string[] } {
  const all = Object.keys(schema.tables);
  const named = [...(config.tables ?? []), ...(config.exclude ?? [])];
  const unknown = named.filter((name) => !Object.hasOwn(schema.tables, name));
  const chosen = config.tables ?? all.filter((name) => !NOISY.has(name));
  const excluded = new Set(config.exclude ?? []);
  const tables = chosen.filter((name) => !excluded.has(name) && Object.hasOwn(schema.tables, name)).map((name) => schema.tables[name]!);
  return { tables, unknown };
}

/** The columns whose values the log never holds: `.secret()` ones (the auth tables' credentials are marked so). */
export function secretColumnsOf(table: TableModel): string[] {
  return Object.entries(table.columns)
    .filter(([, column]) => column.secret)
    .map(([name]) => name);
}
