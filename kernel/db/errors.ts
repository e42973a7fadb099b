import type { SchemaModel } from "../schema/model.js";

/**
 * Database constraint errors as the caller should see them (DESIGN.md section 4): unique and
 * foreign-key violations are 409 CONFLICT, not-null and check violations 400 BAD_REQUEST, anything
 * else undefined (the caller answers 500). Messages are built here from the structured fields of the
 * error, never copied from it: driver messages can quote SQL, and PGlite errors carry the query and
 * its parameters. Offending values are left out too; they may not be the caller's to see.
 */

export interface DatabaseErrorInfo {
  status: 409 | 400;
  code: "CONFLICT" | "BAD_REQUEST";
  message: string;
  data?: { constraint?: string; column?: string; table?: string };
}

type Violation = "unique" | "foreignKey" | "notNull" | "check";

const POSTGRES: Record<string, Violation> = { "23505": "unique", "23503": "foreignKey", "23502": "notNull", "23514": "check" };
const SQLITE: Record<string, Violation> = {
  SQLITE_CONSTRAINT_UNIQUE: "unique",
  SQLITE_CONSTRAINT_PRIMARYKEY: "unique",
  SQLITE_CONSTRAINT_FOREIGNKEY: "foreignKey",
  SQLITE_CONSTRAINT_NOTNULL: "notNull",
  SQLITE_CONSTRAINT_CHECK: "check",
};
/**
 * SQLSTATE class 22, "data exception": a value the column type cannot hold (an integer out of
 * range, a malformed uuid, a NUL byte in text, a date out of range, a numeric overflow). It is the
 * caller's value that is wrong, so 400, never a reported 500.
 */
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;

function dataException(fields: Fields): DatabaseErrorInfo {
  const column = text(fields.column);
  return {
    status: 400,
    code: "BAD_REQUEST",
    message: `A value does not fit its column type${column ? ` (${column})` : ""}`,
    ...(column ? { data: { column } } : {}),
  };
}

const LABEL: Record<Violation, string> = {
  unique: "Unique constraint",
  foreignKey: "Foreign key constraint",
  notNull: "Not-null constraint",
  check: "Check constraint",
};
// Trellis' own constraint names (ddl.ts) end in these suffixes after `{table}_{column}`.
const SUFFIX: Record<Violation, string> = { unique: "_key", foreignKey: "_fkey", notNull: "", check: "_check" };

interface Fields {
  code?: unknown;
  message?: unknown;
  table?: unknown;
  column?: unknown;
  constraint?: unknown;
  detail?: unknown;
  cause?: unknown;
}

/**
 * Classifies a pg, PGlite or better-sqlite3 error, also when wrapped (it follows `cause`). `model`,
 * when given, lets SQLite check violations name their table and column.
 */
export function classifyDatabaseError(error: unknown, model?: SchemaModel): DatabaseErrorInfo | undefined {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const fields = current as Fields;
    const code = typeof fields.code === "string" ? fields.code : "";
    if (POSTGRES[code]) return postgres(POSTGRES[code], fields);
    if (DATA_EXCEPTION.test(code)) return dataException(fields);
    if (SQLITE[code]) return sqlite(SQLITE[code], fields, model);
    current = fields.cause;
  }
  return undefined;
}

function postgres(violation: Violation, fields: Fields): DatabaseErrorInfo {
  const table = text(fields.table);
  const constraint = text(fields.constraint);
  const detail = text(fields.detail) ?? "";
  // Detail reads `Key (slug)=(...) already exists.`; only the column list is kept.
  const keyColumns = /^Key \(([^)]*)\)=/.exec(detail)?.[1];
  let column = text(fields.column) ?? columnFromName(table, constraint, violation);
  if (!column && violation === "unique") column = keyColumns;
  const referenced = violation === "foreignKey" && detail.includes("is still referenced");
  return build(violation, { table, column, constraint }, referenced);
}

function sqlite(violation: Violation, fields: Fields, model?: SchemaModel): DatabaseErrorInfo {
  // better-sqlite3 messages: `UNIQUE constraint failed: post.slug`, `NOT NULL constraint failed:
  // post.title`, `CHECK constraint failed: post_status_check`, `FOREIGN KEY constraint failed`.
  const subject = /constraint failed: (.+)$/.exec(text(fields.message) ?? "")?.[1];
  if (violation === "check") {
    const located = subject ? locateCheck(subject, model) : undefined;
    return build(violation, { ...located, constraint: subject });
  }
  if (!subject || violation === "foreignKey") return build(violation, {});
  const pairs = subject.split(", ").map((part) => part.split("."));
  const table = pairs[0]?.[0];
  const column = pairs.map((pair) => pair[1]).join(", ");
  const constraint = violation === "unique" && table && pairs.length === 1 ? `${table}_${column}_key` : undefined;
  return build(violation, { table, column, constraint });
}

function build(violation: Violation, data: { table?: string; column?: string; constraint?: string }, referenced = false): DatabaseErrorInfo {
  const where = data.table ? ` on ${data.table}${data.column ? `.${data.column}` : ""}` : "";
  let message = `${LABEL[violation]} violated${where}`;
  if (violation === "foreignKey" && data.table) {
    message += referenced ? ": the row is still referenced" : ": the referenced row does not exist";
  }
  const conflict = violation === "unique" || violation === "foreignKey";
  const clean = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined && v !== ""));
  return {
    status: conflict ? 409 : 400,
    code: conflict ? "CONFLICT" : "BAD_REQUEST",
    message,
    ...(Object.keys(clean).length > 0 ? { data: clean } : {}),
  };
}

/** `post_authorId_fkey` on table `post` names column `authorId`. */
function columnFromName(table: string | undefined, constraint: string | undefined, violation: Violation): string | undefined {
  const suffix = SUFFIX[violation];
  if (!table || !constraint || !suffix || !constraint.startsWith(`${table}_`) || !constraint.endsWith(suffix)) return undefined;
  return constraint.slice(table.length + 1, -suffix.length) || undefined;
}

/** The table and column of a `{table}_{column}_check` name; the model settles underscores. */
function locateCheck(name: string, model?: SchemaModel): { table?: string; column?: string } {
  for (const table of Object.values(model?.tables ?? {})) {
    const column = columnFromName(table.name, name, "check");
    if (column && Object.hasOwn(table.columns, column)) return { table: table.name, column };
  }
  return {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
