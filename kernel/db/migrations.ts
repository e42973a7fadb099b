import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigratorProps } from "kysely";
import type { SchemaModel } from "../schema/model.js";
import type { DatabaseKind } from "../resources.js";
import { addColumnStatements, createIndexStatement, createTablesStatements, dropIndexStatement } from "./ddl.js";
import { planMigrations, type MigrationStep } from "./diff.js";
import { withTransactionalDdl } from "./transactional-ddl.js";

/**
 * Migrations over the ordered schema versions: step N applies the difference between versions N-1
 * and N (diff.ts). Steps are named `0001_<version>` by registration index, because Kysely runs them
 * in name order and a version string says nothing about order.
 */

/** `0001_<version>`: the 1-based index, zero padded, then the version with unsafe characters as `_`. */
export function migrationName(index: number, version: string): string {
  return `${String(index + 1).padStart(4, "0")}_${version.replace(/[^A-Za-z0-9_.-]/g, "_")}`;
}

/** The SQL of one step for one family, in an order where every statement's dependencies exist. */
export function stepStatements(kind: DatabaseKind, step: MigrationStep): string[] {
  return [
    // Index changes first: a new table may reference a column that only now becomes unique.
    ...step.dropIndexes.map(dropIndexStatement),
    ...step.createIndexes.map((change) => createIndexStatement(change.table, change.column, change.kind)),
    // Then new tables, so that a column added to an existing table may reference one of them.
    ...createTablesStatements(kind, step.createTables),
    ...step.addColumns.flatMap((added) => addColumnStatements(kind, added.table, added.name, added.column)),
  ];
}

/**
 * A Kysely `MigrationProvider` over the schema versions. The plan and every statement are computed
 * here, so an unsafe history or an impossible DDL throws when the app is built, not mid-migration.
 */
export function createMigrationProvider(kind: DatabaseKind, models: readonly SchemaModel[]): MigrationProvider {
  const migrations: Record<string, Migration> = {};
  for (const step of planMigrations(models)) {
    const statements = stepStatements(kind, step);
    migrations[migrationName(step.index, step.version)] = {
      up: async (db: Kysely<any>) => {
        for (const statement of statements) await sql.raw(statement).execute(db);
      },
    };
  }
  return { getMigrations: async () => migrations };
}

/**
 * Kysely's `Migrator` over the schema versions, with its default table names. Pending steps run in
 * one transaction under the migrator's lock, so a failing step leaves the database at the version
 * it had before `migrateToLatest()`, which then resolves `{ error, results }`. On SQLite, whose
 * Kysely adapter opts out of transactional DDL although SQLite has it, the migrator is given a view
 * of the instance that opts back in (transactional-ddl.ts).
 */
export function createMigrator(
  db: Kysely<any>,
  kind: DatabaseKind,
  models: readonly SchemaModel[],
  options: Omit<MigratorProps, "db" | "provider"> = {},
): Migrator {
  const provider = createMigrationProvider(kind, models);
  return new Migrator({ ...options, db: kind === "sqlite" ? withTransactionalDdl(db) : db, provider });
}
