import { sql, type Kysely } from "kysely";
import type { ColumnModel, SchemaModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";

/**
 * What each applied schema version looked like, kept beside Kysely's own bookkeeping in
 * `trellis_migration` (name, version, checksum, definition). The row is written by the step itself,
 * inside the migration's transaction, so it exists exactly when the step was committed. At the next
 * start the registered versions are compared with it (history-check.ts): an applied version whose
 * definition changed since is refused, naming what differs.
 */
export const VERSION_TABLE = "trellis_migration";

/** A version's definition as stored: table -> column -> one readable line. Relations are not DDL, so not in it. */
export type Definition = Record<string, Record<string, string>>;

export interface VersionRecord {
  name: string;
  version: string;
  checksum: string;
  definition: Definition;
}

export function definitionOf(model: SchemaModel): Definition {
  const tables: Definition = {};
  for (const name of Object.keys(model.tables).sort()) {
    const columns: Record<string, string> = {};
    const table = model.tables[name]!;
    for (const column of Object.keys(table.columns).sort()) columns[column] = describeColumn(table.columns[column]!);
    // Only searchable tables carry the entry, so versions without an index keep their checksums.
    if (table.search) columns["~search"] = `${table.search.language} ${Object.entries(table.search.columns).map(([column, weight]) => `${column}:${weight}`).join(" ")}`;
    tables[name] = columns;
  }
  return tables;
}

/** `text not null unique default 'a' references user.id on delete cascade enum(a|b)`: the DDL-relevant facts of a column. */
function describeColumn(column: ColumnModel): string {
  const parts: string[] = [column.type, column.nullable ? "null" : "not null"];
  if (column.primaryKey) parts.push("primary key");
  if (column.unique) parts.push("unique");
  if (column.index) parts.push("index");
  if (column.default) parts.push(column.default.kind === "sql" ? `default sql(${column.default.sql})` : `default ${JSON.stringify(column.default.value)}`);
  const ref = column.references;
  if (ref) parts.push(`references ${ref.table}.${ref.column} on delete ${ref.onDelete ?? "no action"} on update ${ref.onUpdate ?? "no action"}`);
  if (column.enum) parts.push(`enum${column.enum.multiple ? " multiple" : ""}(${[...column.enum.values].sort().join("|")})`);
  return parts.join(" ");
}

/** SHA-256 of the definition, hex. WebCrypto, so it runs wherever the kernel does. */
export async function checksumOf(definition: Definition): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(definition));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

export async function ensureVersionTable(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists ${sql.table(VERSION_TABLE)} (name varchar(255) primary key, version text not null, checksum varchar(64) not null, definition text not null)`.execute(db);
}

/** Records one version (inside the step's transaction); a row already there is kept. */
export async function recordVersion(db: Kysely<any>, name: string, model: SchemaModel): Promise<void> {
  await ensureVersionTable(db);
  const definition = definitionOf(model);
  const checksum = await checksumOf(definition);
  await sql`insert into ${sql.table(VERSION_TABLE)} (name, version, checksum, definition) values (${name}, ${model.version}, ${checksum}, ${JSON.stringify(definition)}) on conflict (name) do nothing`.execute(db);
}

export async function readVersions(db: Kysely<any>, kind: DatabaseKind): Promise<Map<string, VersionRecord>> {
  const records = new Map<string, VersionRecord>();
  if (!(await tableExists(db, kind, VERSION_TABLE))) return records;
  const { rows } = await sql<{ name: string; version: string; checksum: string; definition: string }>`select name, version, checksum, definition from ${sql.table(VERSION_TABLE)}`.execute(db);
  for (const row of rows) records.set(row.name, { ...row, definition: JSON.parse(row.definition) as Definition });
  return records;
}

/** Whether `name` exists in the connection's own schema (PostgreSQL) or the database (SQLite). */
export async function tableExists(db: Kysely<any>, kind: DatabaseKind, name: string): Promise<boolean> {
  const query =
    kind === "postgres"
      ? sql<{ found: unknown }>`select to_regclass(${name}::text) is not null as found`
      : sql<{ found: unknown }>`select count(*) as found from sqlite_master where type = 'table' and name = ${name}`;
  const { rows } = await query.execute(db);
  return Boolean(Number(rows[0]?.found === true ? 1 : rows[0]?.found ?? 0));
}
