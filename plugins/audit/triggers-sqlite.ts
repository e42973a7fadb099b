import { sql, type Kysely } from "kysely";
import { primaryKeyOf, type ColumnModel, type SchemaModel, type TableModel } from "../../kernel/index.js";
import { AUDIT_TABLE, CONTEXT_TABLE } from "./table.js";
import { secretColumnsOf } from "./options.js";

const OPS = ["insert", "update", "delete"] as const;
type Op = (typeof OPS)[number];

/**
 * SQLite has no session settings and no generic row-to-JSON, so each audited table gets three
 * triggers written out column by column. They run inside the writing statement (and its
 * transaction), read the writer from the one row of `trellis_audit_context` (which the app sets on
 * its connection before each write), and write nothing for an update that changed no column.
 * Bytes are recorded as `\x` hex, as PostgreSQL's JSON does; JSON columns as JSON.
 */
function triggerSql(table: TableModel, op: Op): string {
  const columns = Object.entries(table.columns);
  const secrets = new Set(secretColumnsOf(table));
  const key = primaryKeyOf(table);
  const row = (side: "OLD" | "NEW") => `json_object(${columns.map(([name, column]) => `${lit(name)}, ${valueOf(`${side}.${id(name)}`, column, secrets.has(name))}`).join(", ")})`;
  const names = columns.map(([name]) => name);
  const changed =
    op === "update"
      ? `(select json_group_array(value) from json_each(json_array(${names.map((name) => `case when OLD.${id(name)} is not NEW.${id(name)} then ${lit(name)} end`).join(", ")})) where value is not null)`
      : `json_array(${names.map(lit).join(", ")})`;
  const side = op === "delete" ? "OLD" : "NEW";
  const when = op === "update" ? ` when ${names.map((name) => `OLD.${id(name)} is not NEW.${id(name)}`).join(" or ")}` : "";
  const field = (name: string) => `json_extract(c.actor, '$.${name}')`;
  return `create trigger ${id(triggerName(table.name, op))} after ${op} on ${id(table.name)} for each row${when} begin
  insert into ${id(AUDIT_TABLE)} (at, table_name, op, row_key, before, after, changed, actor_kind, actor_id, impersonator_id, request_id, source, job, organization_id)
  select strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ${lit(table.name)}, '${op}', ${key ? `cast(${side}.${id(key)} as text)` : "null"},
    ${op === "insert" ? "null" : row("OLD")}, ${op === "delete" ? "null" : row("NEW")}, ${changed},
    coalesce(${field("kind")}, 'system'), ${field("userId")}, ${field("impersonatorId")}, ${field("requestId")}, ${field("source")}, ${field("job")}, ${field("organizationId")}
  from (select (select actor from ${id(CONTEXT_TABLE)} where id = 1) as actor) as c;
end`;
}

function valueOf(ref: string, column: ColumnModel, secret: boolean): string {
  if (secret) return `case when ${ref} is null then null else '[redacted]' end`;
  if (column.type === "bytes") return `'\\x' || lower(hex(${ref}))`;
  if (column.type === "jsonb" || column.type === "vector") return `case when json_valid(${ref}) then json(${ref}) else ${ref} end`;
  return ref;
}

function triggerName(table: string, op: Op): string {
  return `trellis_audit_${table}_${op}`;
}

function id(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function lit(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Recreates every audited table's triggers (their column lists follow the schema) and drops the rest. */
export async function installSqliteTriggers(db: Kysely<any>, schema: SchemaModel, audited: readonly TableModel[]): Promise<void> {
  const names = new Set(audited.map((table) => table.name));
  await db.transaction().execute(async (trx) => {
    for (const name of Object.keys(schema.tables)) {
      for (const op of OPS) await sql`drop trigger if exists ${sql.id(triggerName(name, op))}`.execute(trx);
      if (!names.has(name)) continue;
      for (const op of OPS) await sql.raw(triggerSql(schema.tables[name]!, op)).execute(trx);
    }
  });
}
