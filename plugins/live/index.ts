import { sql } from "kysely";
import { definePlugin, primaryKeyOf, type AppPlugin, type SealedApp } from "../../kernel/index.js";

type LiveChange = Parameters<SealedApp["publishChange"]>[0];

const CHANNEL = "trellis_changes";
/** The one statement trigger of earlier versions, replaced by one per event. */
const LEGACY_TRIGGER = "trellis_live_notify";
const TRIGGERS = { insert: "trellis_live_insert", update: "trellis_live_update", delete: "trellis_live_delete", truncate: "trellis_live_truncate" };
const OPS = new Set(["insert", "update", "delete"]);

/**
 * The notification of one statement: the schema and table, and when the statement wrote at most
 * `MAX_ROWS` rows and the whole fits NOTIFY's 8,000 bytes, what a replica needs to re-run only the
 * live queries those rows can enter or leave: the keys of the rows before (update, delete) and the
 * rows after (insert, update), each with its key and every column whose JSON is at most
 * `MAX_VALUE` bytes (a longer value is left out: unknown, so a filter on it re-runs). Otherwise the
 * table alone, and every live query on it re-runs. The trigger's argument is the primary key column.
 */
const MAX_ROWS = 50;
const MAX_VALUE = 256;
const NOTIFY_FUNCTION = `create or replace function trellis_notify_change() returns trigger language plpgsql as $$
declare
  message jsonb := jsonb_build_object('schema', TG_TABLE_SCHEMA, 'table', TG_TABLE_NAME);
  detail jsonb := jsonb_build_object('op', lower(TG_OP));
  written int := 0;
  payload text;
begin
  if TG_OP <> 'TRUNCATE' and TG_NARGS = 1 then
    if TG_OP in ('UPDATE', 'DELETE') then
      select detail || jsonb_build_object('keys', coalesce(jsonb_agg(to_jsonb(o) -> TG_ARGV[0]), '[]')), count(*)
        into detail, written from (select * from trellis_old limit ${MAX_ROWS + 1}) o;
    end if;
    if TG_OP in ('INSERT', 'UPDATE') and written <= ${MAX_ROWS} then
      select detail || jsonb_build_object('rows', coalesce(jsonb_agg(small), '[]')), greatest(written, count(*))
        into detail, written
        from (select * from trellis_new limit ${MAX_ROWS + 1}) n,
        lateral (select jsonb_object_agg(e.key, e.value) as small from jsonb_each(to_jsonb(n)) e
                 where e.key = TG_ARGV[0] or octet_length(e.value::text) <= ${MAX_VALUE}) s;
    end if;
    if written <= ${MAX_ROWS} then
      payload := (message || detail)::text;
      if octet_length(payload) <= 7900 then
        perform pg_notify('${CHANNEL}', payload);
        return null;
      end if;
    end if;
  end if;
  perform pg_notify('${CHANNEL}', message::text);
  return null;
end $$`;

/**
 * Live queries across processes. Within one process every live query is already re-run after the
 * app's own commits (the kernel tracks them); this plugin adds what a listening provider
 * (`postgresLive()`) needs: after migrations, statement triggers on each table a live resource
 * reads (its own and every table its relations reach, for includes and relation filters) NOTIFY its name and, for small statements, the rows written; each replica LISTENs and
 * marks stale the queries those rows can affect (every query on the table when it cannot tell). Stage `feature`,
 * after resources (it reads their registry for the tables to watch).
 */
export function livePlugin(): AppPlugin {
  return definePlugin({
    name: "live",
    stage: "feature",
    optionalDependencies: ["resources"],
    build(ctx) {
      const provider = ctx.resources.live;
      if (!provider?.listen || ctx.resources.kind !== "postgres") return;
      const { db } = ctx.resources;
      let sealed: SealedApp | undefined;
      let listener: { close(): Promise<void> } | undefined;
      let schemaName: string | undefined;
      const watched = () => {
        const tables = new Set<string>();
        // A live resource's includes and relation filters (its rules' too) read the tables its
        // relations reach, at any depth: a write to any of them may change its snapshots.
        const reached = new Set<string>();
        const reach = (table: string) => {
          if (reached.has(table)) return;
          reached.add(table);
          tables.add(table);
          for (const relation of Object.values(ctx.schema.relations[table] ?? {})) {
            if (relation.via) tables.add(relation.via);
            reach(relation.target);
          }
        };
        for (const resource of ctx.want("resource-registry")?.values() ?? []) if (resource.procedures.live) reach(resource.name);
        return [...tables];
      };
      ctx.hooks.sealed.tap((app) => (sealed = app));
      // Triggers after every migration run: idempotent, serialised across replicas starting at once.
      ctx.hooks.migrated.tap(async () => {
        const tables = watched();
        if (tables.length === 0) return;
        await db.transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(hashtext('trellis_live'))`.execute(trx);
          await sql.raw(NOTIFY_FUNCTION).execute(trx);
          for (const table of tables) {
            const key = ctx.schema.tables[table] && primaryKeyOf(ctx.schema.tables[table]);
            const args = key === undefined ? sql`` : sql.lit(key);
            const on = sql.id(table);
            await sql`drop trigger if exists ${sql.id(LEGACY_TRIGGER)} on ${on}`.execute(trx);
            for (const name of Object.values(TRIGGERS)) await sql`drop trigger if exists ${sql.id(name)} on ${on}`.execute(trx);
            // Statement triggers with transition tables: one notification per statement, whatever it wrote.
            await sql`create trigger ${sql.id(TRIGGERS.insert)} after insert on ${on} referencing new table as trellis_new for each statement execute function trellis_notify_change(${args})`.execute(trx);
            await sql`create trigger ${sql.id(TRIGGERS.update)} after update on ${on} referencing old table as trellis_old new table as trellis_new for each statement execute function trellis_notify_change(${args})`.execute(trx);
            await sql`create trigger ${sql.id(TRIGGERS.delete)} after delete on ${on} referencing old table as trellis_old for each statement execute function trellis_notify_change(${args})`.execute(trx);
            await sql`create trigger ${sql.id(TRIGGERS.truncate)} after truncate on ${on} for each statement execute function trellis_notify_change()`.execute(trx);
          }
        });
      });
      ctx.hooks.ready.tap(async () => {
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
        schemaName = rows[0]?.schema;
        listener = await provider.listen!(
          CHANNEL,
          (payload) => {
            let message: LiveChange & { schema?: string };
            try {
              message = JSON.parse(payload);
            } catch {
              return;
            }
            // Apps in other schemas of the same database share the channel.
            if (typeof message.table !== "string" || message.schema !== schemaName) return;
            const { table, op, keys, rows } = message;
            sealed?.publishChange(OPS.has(op!) && (Array.isArray(keys) || Array.isArray(rows)) ? { table, op, keys, rows } : { table });
          },
          () => {
            for (const table of watched()) sealed?.publishChange({ table });
          },
        );
      });
      ctx.hooks.close.tap(async () => {
        await listener?.close();
      });
    },
  });
}
