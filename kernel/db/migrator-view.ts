import { sql, type DatabaseIntrospector, type DialectAdapter, type Kysely, type QueryExecutor, type TableMetadata } from "kysely";

/**
 * The views of a Kysely instance that Kysely's `Migrator` is given: the real instance with one
 * behaviour of Kysely's replaced where it does not hold for Trellis's databases.
 */

/**
 * A view of a Kysely instance whose adapter reports transactional DDL.
 *
 * Kysely's `SqliteAdapter` says `supportsTransactionalDdl: false`, so its `Migrator` runs SQLite
 * steps without a transaction and a failing step would leave half of its tables behind. SQLite does
 * roll back DDL, so the migrator is handed this view: everything is the real instance (methods are
 * bound to it, which Kysely's private fields require) except `getExecutor().adapter`, the only place
 * the migrator reads the flag. Queries still run through the real executor.
 */
export function withTransactionalDdl<DB>(db: Kysely<DB>): Kysely<DB> {
  const executor = db.getExecutor();
  if (executor.adapter.supportsTransactionalDdl) return db;
  const adapter = overlay(executor.adapter, { supportsTransactionalDdl: true }) as DialectAdapter;
  const viewExecutor = overlay(executor, { adapter }) as QueryExecutor;
  return overlay(db, { getExecutor: () => viewExecutor }) as Kysely<DB>;
}

/**
 * A view of a PostgreSQL-family Kysely instance whose introspection, the migrator's only use of it
 * (does the migration table exist?), lists the tables of `schema` by name alone.
 *
 * Kysely's own introspector reads every column of every table in every schema and calls
 * `pg_get_serial_sequence` for each: slow on a shared database, and it fails when another session
 * drops a column between the query's catalog snapshot and that call (`column "x" of relation "y"
 * does not exist`), which another app migrating in its own schema of the same database does.
 */
export function withSchemaTables<DB>(db: Kysely<DB>, schema: string | undefined): Kysely<DB> {
  const introspection: DatabaseIntrospector = {
    getSchemas: () => db.introspection.getSchemas(),
    getTables: async () => {
      const { rows } = await sql<{ name: string; schema: string; view: boolean }>`
        select c.relname as name, n.nspname as schema, c.relkind in ('v', 'm') as view
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p', 'v', 'm', 'f')
          and ${schema === undefined ? sql`n.nspname = any(current_schemas(false))` : sql`n.nspname = ${schema}`}`.execute(db);
      return rows.map((row): TableMetadata => ({ name: row.name, schema: row.schema, isView: row.view, columns: [] }));
    },
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  };
  return overlay(db, { introspection });
}

/** `target` with some members replaced; every other member is read from and bound to `target`. */
function overlay<T extends object>(target: T, replaced: Record<string, unknown>): T {
  return new Proxy(target, {
    get(object, key) {
      if (typeof key === "string" && Object.hasOwn(replaced, key)) return replaced[key];
      const value = Reflect.get(object, key, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}
