import { Kysely, sql, type Migrator } from "kysely";
import { createAppDatabase, type AppDatabase } from "./db/database.js";
import { createMigrator } from "./db/migrations.js";
import { validateHistory } from "./db/diff.js";
import { reentrant } from "./db/dialect/index.js";
import type { DatabaseConfig } from "./resources.js";
import { EMPTY_SCHEMA, type SchemaModel } from "./schema/model.js";

/** The app's database: the typed `db`, its migrator, and shutdown. */
export interface Datastore {
  readonly db: AppDatabase<any>;
  readonly migrator: Migrator;
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function openDatastore(config: DatabaseConfig, schemas: readonly SchemaModel[]): Datastore {
  // Refuses unsafe steps (a changed type, a removed column) before anything touches the database.
  validateHistory(schemas);
  const wrapped = reentrant(config.dialect);
  const kysely = new Kysely<any>({ dialect: wrapped.dialect });
  const db = createAppDatabase(kysely, config.kind, schemas.at(-1) ?? EMPTY_SCHEMA, (fn) => wrapped.transact(kysely, fn));
  // Kysely's Migrator looks for its tables in every schema unless told which: with several apps in
  // schemas of one PostgreSQL database it would find another app's lock table and then fail to
  // read its own. `ready` resolves the connection's schema, and the migrator is built for it.
  let migrationSchema: string | undefined;
  let migrator: Migrator | undefined;
  let closed: Promise<void> | undefined;
  return {
    db,
    get migrator() {
      return (migrator ??= createMigrator(kysely, config.kind, schemas, migrationSchema ? { migrationTableSchema: migrationSchema } : {}));
    },
    ready: async () => {
      if (config.kind === "postgres") {
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(kysely);
        migrationSchema = rows[0]?.schema ?? undefined;
      }
      // Whatever SQLite dialect the integrator passed, foreign keys are enforced (SQLite ships them off).
      if (config.kind === "sqlite") {
        await sql`PRAGMA foreign_keys = ON`.execute(kysely);
        const { rows } = await sql<{ foreign_keys: number }>`PRAGMA foreign_keys`.execute(kysely);
        if (rows[0]?.foreign_keys !== 1) throw new Error("SQLite refused PRAGMA foreign_keys = ON; foreign keys would not be enforced");
      }
    },
    close: () =>
      (closed ??= (async () => {
        await kysely.destroy();
        await config.close?.();
      })()),
  };
}
