import { Kysely, sql } from "kysely";
import { createAppDatabase, type AppDatabase } from "../../kernel/db/database.js";
import { reentrant } from "../../kernel/db/dialect/index.js";
import { createMigrator } from "../../kernel/db/migrations.js";
import type { Migrator } from "kysely";
import type { SchemaModel } from "../../kernel/schema/model.js";
import { openDatabase, type Family } from "../support/databases.js";

/**
 * One real database per test file and family, with every statement it runs recorded, wired as the
 * app wires it (kernel/db/datastore.ts): the dialect wrapped for re-entrant transactions.
 */
export interface Harness {
  family: Family;
  kind: "postgres" | "sqlite";
  kysely: Kysely<any>;
  /** SQL of every statement run since the last `statements.length = 0`. */
  statements: string[];
  /** `context.db` over the model last passed to `migrate`. */
  db: AppDatabase<any>;
  migrate(models: readonly SchemaModel[]): Promise<void>;
  /** A migrator over `models` whose bookkeeping tables live in this database's own schema. */
  migrator(models: readonly SchemaModel[]): Migrator;
  /** Drops every table (migration bookkeeping included), leaving an empty database. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openHarness(family: Family, models: readonly SchemaModel[] = []): Promise<Harness> {
  const database = await openDatabase(family);
  const statements: string[] = [];
  const wrapped = reentrant(database.dialect);
  const kysely = new Kysely<any>({
    dialect: wrapped.dialect,
    log: (event) => {
      if (event.level === "query") statements.push(event.query.sql);
    },
  });
  const harness: Harness = {
    family,
    kind: database.kind,
    kysely,
    statements,
    db: createAppDatabase(kysely, database.kind, { version: "0", tables: {}, relations: {} }, (fn) => wrapped.transact(kysely, fn)),
    // Kysely's Migrator would otherwise find another test file's tables in another schema.
    migrator: (list) => createMigrator(kysely, database.kind, list, database.schema ? { migrationTableSchema: database.schema } : {}),
    async migrate(list) {
      const { error } = await harness.migrator(list).migrateToLatest();
      if (error) throw error;
      const latest = list.at(-1)!;
      // A fresh Kysely view per model: `query` is attached once per instance.
      harness.db = createAppDatabase(kysely.withoutPlugins(), database.kind, latest, (fn) => wrapped.transact(kysely, fn));
    },
    async reset() {
      if (database.kind === "postgres") {
        // The fixture may isolate a database as a schema first on the search path; empty that one.
        const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(kysely);
        const schema = sql.id(rows[0]!.name);
        await sql`drop schema ${schema} cascade`.execute(kysely);
        await sql`create schema ${schema}`.execute(kysely);
        return;
      }
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(kysely);
      await sql`pragma foreign_keys = off`.execute(kysely);
      for (const { name } of rows) await sql`drop table ${sql.id(name)}`.execute(kysely);
      await sql`pragma foreign_keys = on`.execute(kysely);
    },
    async close() {
      await kysely.destroy();
      await database.close();
    },
  };
  if (models.length > 0) await harness.migrate(models);
  return harness;
}
