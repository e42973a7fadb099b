import { sql, type Kysely } from "kysely";
import { primaryKeyOf, type SchemaModel, type TableModel } from "../../kernel/index.js";
import { AUDIT_TABLE } from "./table.js";
import { secretColumnsOf } from "./options.js";

const TRIGGERS = ["trellis_audit", "trellis_audit_update"] as const;
const FUNCTION = "trellis_audit_record";

/**
 * Row triggers on each audited table (one for inserts and deletes, one for updates that changed
 * something: `OLD.* IS DISTINCT FROM NEW.*`, checked in C before any PL/pgSQL runs), calling one
 * function with the table's key column and its secret columns as arguments. The function runs inside
 * the writing statement's transaction, so an entry exists exactly when its change commits; it reads
 * the writer from the `trellis.audit` setting (empty or unset: the system, such as raw SQL from
 * psql). It runs no query of its own but the insert: the changed columns are found when entries are
 * read, by comparing before and after, except the secret ones, whose values it replaces by
 * `[redacted]` after noting which changed (the `changed` column holds those).
 */
function functionSql(schema: string): string {
  const table = `${quote(schema)}.${quote(AUDIT_TABLE)}`;
  return `create or replace function ${quote(schema)}.${FUNCTION}() returns trigger language plpgsql as $fn$
declare
  old_row jsonb;
  new_row jsonb;
  secrets jsonb := '[]'::jsonb;
  ctx jsonb;
  raw text;
  secret text;
  i int;
begin
  if TG_OP <> 'INSERT' then old_row := to_jsonb(OLD); end if;
  if TG_OP <> 'DELETE' then new_row := to_jsonb(NEW); end if;
  for i in 1 .. TG_NARGS - 1 loop
    secret := TG_ARGV[i];
    if TG_OP = 'UPDATE' and old_row -> secret is distinct from new_row -> secret then secrets := secrets || to_jsonb(secret); end if;
    if old_row -> secret <> 'null'::jsonb then old_row := jsonb_set(old_row, array[secret], '"[redacted]"'); end if;
    if new_row -> secret <> 'null'::jsonb then new_row := jsonb_set(new_row, array[secret], '"[redacted]"'); end if;
  end loop;
  raw := current_setting('trellis.audit', true);
  if raw <> '' then ctx := raw::jsonb; end if;
  insert into ${table} (at, table_name, op, row_key, before, after, changed, actor_kind, actor_id, impersonator_id, request_id, source, job, organization_id)
  values (
    to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), TG_TABLE_NAME, lower(TG_OP),
    case when TG_ARGV[0] = '' then null else coalesce(new_row, old_row) ->> TG_ARGV[0] end,
    old_row, new_row, secrets,
    coalesce(ctx ->> 'kind', 'system'), ctx ->> 'userId', ctx ->> 'impersonatorId', ctx ->> 'requestId', ctx ->> 'source', ctx ->> 'job', ctx ->> 'organizationId'
  );
  return null;
end
$fn$`;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Installs the function and the triggers (idempotent, serialised across replicas starting at once),
 * and removes the trigger from tables of the schema no longer audited.
 */
export async function installPostgresTriggers(db: Kysely<any>, schema: SchemaModel, audited: readonly TableModel[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('trellis_audit'))`.execute(trx);
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(trx);
    await sql.raw(functionSql(rows[0]!.schema)).execute(trx);
    const names = new Set(audited.map((table) => table.name));
    for (const name of Object.keys(schema.tables)) {
      for (const trigger of TRIGGERS) await sql`drop trigger if exists ${sql.id(trigger)} on ${sql.table(name)}`.execute(trx);
      if (!names.has(name)) continue;
      const table = schema.tables[name]!;
      const args = sql.join([primaryKeyOf(table) ?? "", ...secretColumnsOf(table)].map((arg) => sql.lit(arg)));
      await sql`create trigger ${sql.id(TRIGGERS[0])} after insert or delete on ${sql.table(name)} for each row execute function ${sql.raw(FUNCTION)}(${args})`.execute(trx);
      await sql`create trigger ${sql.id(TRIGGERS[1])} after update on ${sql.table(name)} for each row when (old.* is distinct from new.*) execute function ${sql.raw(FUNCTION)}(${args})`.execute(trx);
    }
  });
}
