import type { Migrator } from "kysely";
import type { AppMigrator } from "../db/migrator.js";

/** A query named a missing table or column: the app's migrations are pending, the database is newer, or neither. */
export type SchemaVerdict = "behind" | "ahead" | "current";

/**
 * Whether the database is at the app's latest schema version. A built app whose migrations are
 * pending (nobody called `built.migrator.migrateToLatest()` yet), or are running, still serves; a
 * query that meets a table not migrated yet answers 503 "starting" (readiness.ts), and `/health`
 * says `starting`. Once the schema is seen current it stays so until a migration runs again.
 */
export class SchemaGate {
  #running = 0;
  #current = false;
  #checking: Promise<boolean> | undefined;
  /** Set by a successful `migrateToLatest()` inside the current run. */
  #latest = false;

  constructor(private readonly migrator: () => Migrator) {}

  /** True once the schema was seen current and no migration runs. */
  get current(): boolean {
    return this.#current && this.#running === 0;
  }

  /** Looks again when not known current (concurrent callers share one look). */
  check(): Promise<boolean> {
    if (this.#running > 0) return Promise.resolve(false);
    if (this.#current) return Promise.resolve(true);
    return (this.#checking ??= this.#pending()
      .then((pending) => (this.#current = !pending && this.#running === 0))
      .finally(() => (this.#checking = undefined)));
  }

  async #pending(): Promise<boolean> {
    const migrations = await this.migrator().getMigrations();
    return migrations.some((migration) => migration.executedAt === undefined);
  }

  /** The migrator with each run marked: the schema is not current while it runs, and looked at again after. */
  guard(inner: AppMigrator): AppMigrator {
    const marked =
      <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        this.#running++;
        this.#current = false;
        this.#latest = false;
        try {
          return await run(...args);
        } finally {
          this.#running--;
          if (this.#latest && this.#running === 0) this.#current = true;
        }
      };
    return Object.freeze({
      // A successful run to the latest version is known current without looking again (the first
      // request after start() then costs no query, even while the database is busy).
      migrateToLatest: marked(async () => {
        const outcome = await inner.migrateToLatest();
        if (!outcome.error) this.#latest = true;
        return outcome;
      }),
      migrateTo: marked((target: Parameters<AppMigrator["migrateTo"]>[0]) => inner.migrateTo(target)),
      migrateUp: marked(() => inner.migrateUp()),
      migrateDown: marked(() => inner.migrateDown()),
      assumeLatest: marked(async () => {
        await inner.assumeLatest();
        this.#latest = true;
      }),
      getMigrations: () => inner.getMigrations(),
    });
  }
}
