import type { DatabaseIntrospector, Dialect, DialectAdapter, Driver, Kysely, QueryCompiler } from "kysely";

/**
 * A dialect whose connection opens only when `open()` is called (or fails when `fail()` is): an
 * app built on it stays "starting" for as long as the test wants, as one waiting on a slow
 * database server would.
 */
export function gatedDialect(inner: Dialect): { dialect: Dialect; open(): void; fail(error: Error): void } {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  gate.catch(() => {});
  const dialect: Dialect = {
    createAdapter: (): DialectAdapter => inner.createAdapter(),
    createQueryCompiler: (): QueryCompiler => inner.createQueryCompiler(),
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => inner.createIntrospector(db),
    createDriver: (): Driver => {
      const driver = inner.createDriver();
      return {
        init: async () => {
          await gate;
          await driver.init();
        },
        acquireConnection: () => driver.acquireConnection(),
        beginTransaction: (connection, settings) => driver.beginTransaction(connection, settings),
        commitTransaction: (connection) => driver.commitTransaction(connection),
        rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
        releaseConnection: (connection) => driver.releaseConnection(connection),
        destroy: () => driver.destroy(),
      };
    },
  };
  return { dialect, open, fail };
}
