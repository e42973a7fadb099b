import type { DialectAdapter, Kysely, QueryExecutor } from "kysely";

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
