import { Kysely, sql, type MigrationProvider, type Migrator } from "kysely";
import { createAppDatabase, type AppDatabase } from "./database.js";
import { createMigrationProvider, createMigrator } from "./migrations.js";
import { validateHistory } from "./diff.js";
import { checkVectorSupport } from "./vector-sql.js";
import { reentrant } from "./dialect/index.js";
import type { DatabaseConfig, DatabaseKind } from "../contracts/resources.js";
import { EMPTY_SCHEMA, primaryKeyOf, type SchemaModel } from "../schema/model.js";
import type { ChangeFeed } from "./changes.js";
import { referencesOf } from "./change-cascades.js";
import { LiveHub } from "./live.js";
import { checkHistory } from "./history-check.js";
import { readVersions, type VersionRecord } from "./version-record.js";
import { observedDialect, type Instrumentation } from "../observe/index.js";
import { resolveQueryLimits } from "./query-limits.js";
import { touchUpdatedAt } from "./touch-updated-at.js";
import { attachWriteSetting } from "./write-setting.js";

/** The app's database: the typed `db`, its migrator, committed changes, and shutdown. */
export interface Datastore {
  readonly db: AppDatabase<any>;
  /** Kysely's migrator, built for the connection's schema once `ready` ran. */
  readonly migrator: Migrator;
  /** Writes committed through `db`, for the kernel's `changed` hook. */
  readonly changes: ChangeFeed;
  /** Live queries over `db.query`; invalidated by `changes` and by whatever a live provider publishes. */
  readonly live: LiveHub;
  ready(): Promise<void>;
  /** Refuses an applied history the registered versions no longer describe (db/history-check.ts). */
  checkHistory(): Promise<void>;
  /** What `trellis_migration` holds about each applied version (checksums). */
  versionRecords(): Promise<Map<string, VersionRecord>>;
  close(): Promise<void>;
}

/**
 * Plans already checked, by the schema versions (deep-frozen models, so the same objects mean the same
 * plan) and the family: a later app on the same versions (a test's next app) reuses the provider.
 */
const planned = new WeakMap<SchemaModel, { kind: DatabaseKind; schemas: readonly SchemaModel[]; provider: MigrationProvider }[]>();

function plannedMigrations(kind: DatabaseKind, schemas: readonly SchemaModel[]): MigrationProvider {
  const latest = schemas.at(-1);
  const cacheable = latest !== undefined && schemas.every((model) => Object.isFrozen(model));
  const kept = cacheable ? (planned.get(latest) ?? []) : [];
  const hit = kept.find((entry) => entry.kind === kind && entry.schemas.length === schemas.length && entry.schemas.every((model, i) => model === schemas[i]));
  if (hit) return hit.provider;
  // Refuses unsafe steps (a changed type, a removed column) before anything touches the database.
  validateHistory(schemas);
  checkVectorSupport(kind, schemas);
  // Every step's statements now, so a schema this database's DDL cannot express throws at build too.
  const provider = createMigrationProvider(kind, schemas);
  if (cacheable) planned.set(latest, [...kept, { kind, schemas: [...schemas], provider }]);
  return provider;
}

export function openDatastore(config: DatabaseConfig, schemas: readonly SchemaModel[], instrumentation?: Instrumentation): Datastore {
  const provider = plannedMigrations(config.kind, schemas);
  const wrapped = reentrant(config.dialect);
  const latest = schemas.at(-1) ?? EMPTY_SCHEMA;
  const kysely = new Kysely<any>({ dialect: instrumentation ? observedDialect(wrapped.dialect, instrumentation) : wrapped.dialect, plugins: [touchUpdatedAt(latest, config.kind)] });
  const live = new LiveHub(() => wrapped.changes.listen((change) => live.notify(change)));
  const db = createAppDatabase(kysely, config.kind, latest, (fn) => wrapped.transact(kysely, fn), live, resolveQueryLimits(config.limits), (fn) => wrapped.afterCommit(fn), (fn) => wrapped.transactOnDemand(kysely, fn));
  wrapped.changes.keyOf = (table) => {
    const model = latest.tables[table];
    return model ? primaryKeyOf(model) : undefined;
  };
  wrapped.changes.references = referencesOf(latest);
  attachWriteSetting(db, (setting) => (wrapped.changes.writeSetting = setting));
  // Kysely's Migrator looks for its tables in every schema unless told which: with several apps in
  // schemas of one PostgreSQL database it would find another app's lock table and then fail to
  // read its own. `ready` resolves the connection's schema, and the migrator is built for it.
  let migrationSchema: string | undefined;
  let migrator: Migrator | undefined;
  let closed: Promise<void> | undefined;
  return {
    db,
    changes: wrapped.changes,
    live,
    get migrator() {
      return (migrator ??= createMigrator(kysely, config.kind, provider, migrationSchema ? { migrationTableSchema: migrationSchema } : {}));
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
    checkHistory: () => checkHistory(kysely, config.kind, schemas),
    versionRecords: () => readVersions(kysely, config.kind),
    close: () =>
      (closed ??= (async () => {
        live.close();
        await kysely.destroy();
        await config.close?.();
      })()),
  };
}
