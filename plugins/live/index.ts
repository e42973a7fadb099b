import { sql } from "kysely";
import { definePlugin, type AppPlugin, type SealedApp } from "../../kernel/index.js";

const CHANNEL = "trellis_changes";
const TRIGGER = "trellis_live_notify";

/**
 * Live queries across processes. Within one process every live query is already re-run after the
 * app's own commits (the kernel tracks them); this plugin adds what a listening provider
 * (`postgresLive()`) needs: after migrations, a statement trigger on each table a live resource
 * reads NOTIFYs its name; each replica LISTENs and marks those queries stale. Stage `feature`,
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
        for (const resource of ctx.want("resource-registry")?.values() ?? []) {
          if (!resource.procedures.live) continue;
          tables.add(resource.name);
          for (const name of resource.includable) {
            const relation = ctx.schema.relations[resource.name]?.[name];
            if (relation) tables.add(relation.target), relation.via && tables.add(relation.via);
          }
        }
        return [...tables];
      };
      ctx.hooks.sealed.tap((app) => (sealed = app));
      // Triggers after every migration run: idempotent, serialised across replicas starting at once.
      ctx.hooks.migrated.tap(async () => {
        const tables = watched();
        if (tables.length === 0) return;
        await db.transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(hashtext('trellis_live'))`.execute(trx);
          await sql.raw(`create or replace function trellis_notify_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('${CHANNEL}', json_build_object('schema', TG_TABLE_SCHEMA, 'table', TG_TABLE_NAME)::text);
  return null;
end $$`).execute(trx);
          for (const table of tables) {
            await sql`drop trigger if exists ${sql.id(TRIGGER)} on ${sql.id(table)}`.execute(trx);
            await sql`create trigger ${sql.id(TRIGGER)} after insert or update or delete or truncate on ${sql.id(table)} for each statement execute function trellis_notify_change()`.execute(trx);
          }
        });
      });
      ctx.hooks.ready.tap(async () => {
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
        schemaName = rows[0]?.schema;
        listener = await provider.listen!(
          CHANNEL,
          (payload) => {
            let message: { schema?: string; table?: string };
            try {
              message = JSON.parse(payload);
            } catch {
              return;
            }
            // Apps in other schemas of the same database share the channel.
            if (message.table && message.schema === schemaName) sealed?.publishChange({ table: message.table });
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
