import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigratorProps } from "kysely";
import type { SchemaModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { addColumnStatements, createIndexStatement, createTablesStatements, dropIndexStatement, indexName } from "./ddl.js";
import { CREATE_VECTOR_EXTENSION, hasVectorColumn, hnswIndexStatement, vectorExtensionMissing } from "./vector-sql.js";
import { planMigrations, type MigrationStep } from "./diff.js";
import { createSearchStatements, dropSearchStatements } from "./search-ddl.js";
import { withSchemaTables, withTransactionalDdl } from "./migrator-view.js";
import { checkPostgresNames } from "./postgres-names.js";
import { recordVersion } from "./version-record.js";
import { TrellisError } from "../errors.js";

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
  const vectors = hasVectorColumn([...step.createTables, ...step.addColumns.map((added) => ({ name: added.table, columns: { [added.name]: added.column } }))]);
  return [
    // pgvector's type must exist before a column uses it (the embedded database created it already).
    ...(kind === "postgres" && vectors ? [CREATE_VECTOR_EXTENSION] : []),
    // Index changes first: a new table may reference a column that only now becomes unique.
    ...step.dropIndexes.map(dropIndexStatement),
    ...step.createIndexes.map((change) =>
      change.kind === "hnsw"
        ? hnswIndexStatement(indexName(change.table, change.column), change.table, change.column, change.distance!)
        : createIndexStatement(change.table, change.column, change.kind),
    ),
    // Then new tables, so that a column added to an existing table may reference one of them.
    ...createTablesStatements(kind, step.createTables),
    ...step.addColumns.flatMap((added) => addColumnStatements(kind, added.table, added.name, added.column)),
    // Full-text indexes last: one may cover a column this step added.
    ...step.search.flatMap((change) => [
      ...(change.drop ? dropSearchStatements(kind, change.table) : []),
      ...(change.create ? createSearchStatements(kind, change.create) : []),
    ]),
  ];
}

/**
 * A Kysely `MigrationProvider` over the schema versions. The plan and every statement are computed
 * here, so an unsafe history or an impossible DDL throws when the app is built, not mid-migration.
 */
export function createMigrationProvider(kind: DatabaseKind, models: readonly SchemaModel[]): MigrationProvider {
  const migrations: Record<string, Migration> = {};
  const steps = planMigrations(models);
  if (kind === "postgres") checkPostgresNames(steps);
  for (const step of steps) {
    const statements = stepStatements(kind, step);
    const name = migrationName(step.index, step.version);
    const model = models[step.index]!;
    migrations[name] = {
      up: async (db: Kysely<any>) => {
        // A step may build an index over a large table: the pool's statement_timeout is for requests.
        if (kind === "postgres") await sql`set local statement_timeout = 0`.execute(db);
        for (const [index, statement] of statements.entries()) {
          try {
            await sql.raw(statement).execute(db);
          } catch (cause) {
            if (statement === CREATE_VECTOR_EXTENSION) throw vectorExtensionMissing(name, cause) ?? new MigrationStepError(name, step, index, statements.length, statement, cause);
            throw new MigrationStepError(name, step, index, statements.length, statement, cause);
          }
        }
        // In the same transaction: the record exists exactly when the step was committed.
        await recordVersion(db, name, model);
      },
    };
  }
  return { getMigrations: async () => migrations };
}

/**
 * A statement of a migration step failed. Names the step, its version, the statement and the
 * database's own message; the run was rolled back, so the database is at the version it had before.
 */
export class MigrationStepError extends TrellisError {
  override name = "MigrationStepError";
  readonly step: string;
  readonly version: string;
  readonly statement: string;
  constructor(name: string, step: MigrationStep, index: number, total: number, statement: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const shown = statement.length > 300 ? `${statement.slice(0, 300)}...` : statement;
    super(
      "MIGRATION_STEP_FAILED",
      `Migration ${name} (schema version ${JSON.stringify(step.version)}) failed at statement ${index + 1} of ${total}: ${reason}\n` +
        `  statement: ${shown}\n` +
        "The whole run was rolled back: the database is still at the version it had before the run. " +
        "Fix the cause (the data the statement ran into, or the version's definition if it was never applied anywhere) and start again.",
      { hook: "migrate", cause },
    );
    this.step = name;
    this.version = step.version;
    this.statement = statement;
  }
}

/**
 * Kysely's `Migrator` over the schema versions, with its default table names. Pending steps run in
 * one transaction under the migrator's lock, so a failing step leaves the database at the version
 * it had before `migrateToLatest()`, which then resolves `{ error, results }`. On SQLite, whose
 * Kysely adapter opts out of transactional DDL although SQLite has it, the migrator is given a view
 * of the instance that opts back in; on the PostgreSQL family, one whose introspection reads only the
 * migration table's schema (migrator-view.ts).
 */
export function createMigrator(
  db: Kysely<any>,
  kind: DatabaseKind,
  models: readonly SchemaModel[] | MigrationProvider,
  options: Omit<MigratorProps, "db" | "provider"> = {},
): Migrator {
  const provider = Array.isArray(models) ? createMigrationProvider(kind, models) : (models as MigrationProvider);
  return new Migrator({ ...options, db: kind === "sqlite" ? withTransactionalDdl(db) : withSchemaTables(db, options.migrationTableSchema), provider });
}
