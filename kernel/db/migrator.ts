import type { MigrationInfo, MigrationResultSet, Migrator } from "kysely";
import { TrellisError } from "../errors.js";

/** The migrator `built.migrator` is: Kysely's, run after the app's setup and followed by the `migrated` hook. */
export type AppMigrator = Pick<Migrator, "migrateToLatest" | "migrateTo" | "migrateUp" | "migrateDown" | "getMigrations"> & {
  /**
   * For a database known to be at the app's latest schema version without asking it: a copy of one
   * `migrateToLatest()` brought there (`trellis/testing` hands each test such a copy). Runs the app's
   * setup and the `migrated` hook, with nothing applied, as `migrateToLatest()` would on that
   * database, and skips the migrator's own queries (its lock, the history check, the applied list).
   * On a database that is not at the latest version, queries then meet missing tables.
   */
  assumeLatest(): Promise<void>;
};

/** One applied migration, as `sealed.migrations()` and the admin API report it. */
export interface AppliedMigration {
  /** `0001_<version>`. */
  name: string;
  /** The schema version the step migrates to. */
  version: string;
  executedAt: Date;
  /** SHA-256 of the version's definition when it was applied (`trellis_migration`). */
  checksum?: string;
}

/**
 * Wraps Kysely's migrator so every path (`start()`, or `built.migrator.migrateToLatest()` after
 * `build()`) runs the same setup first: the connection's schema for the bookkeeping tables on
 * PostgreSQL, foreign keys on SQLite, plugin `ready` taps; then the applied history is checked
 * against the registered versions (drift, gaps, order: db/history-check.ts). After a successful run the `migrated`
 * hook gets the applied names, so plugins create their triggers once the tables exist.
 */
export function appMigrator(
  raw: () => Migrator,
  before: () => Promise<void>,
  check: () => Promise<void>,
  after: (applied: string[]) => Promise<void>,
): AppMigrator {
  const run = async (step: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<MigrationResultSet> => {
    await before();
    // A changed, missing or reordered applied version: refused before anything runs, like a failed step.
    try {
      await check();
    } catch (error) {
      return { error };
    }
    const outcome = await step(raw());
    if (outcome.error) return outcome;
    const applied = (outcome.results ?? []).filter((result) => result.status === "Success" && result.direction === "Up").map((result) => result.migrationName);
    try {
      await after(applied);
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      return { ...outcome, error: new TrellisError("KERNEL_MIGRATED_HOOK_FAILED", `A plugin failed after migrating: ${message}`, { hook: "migrated", cause }) };
    }
    return outcome;
  };
  return Object.freeze({
    migrateToLatest: () => run((migrator) => migrator.migrateToLatest()),
    migrateTo: (target: Parameters<Migrator["migrateTo"]>[0]) => run((migrator) => migrator.migrateTo(target)),
    migrateUp: () => run((migrator) => migrator.migrateUp()),
    migrateDown: () => run((migrator) => migrator.migrateDown()),
    assumeLatest: async () => {
      await before();
      try {
        await after([]);
      } catch (cause) {
        const message = cause instanceof Error ? cause.message : String(cause);
        throw new TrellisError("KERNEL_MIGRATED_HOOK_FAILED", `A plugin failed after migrating: ${message}`, { hook: "migrated", cause });
      }
    },
    getMigrations: async (): Promise<readonly MigrationInfo[]> => {
      await before();
      return raw().getMigrations();
    },
  });
}
