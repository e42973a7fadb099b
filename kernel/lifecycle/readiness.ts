import { TrellisError, report, type ErrorSource, type OnError } from "../errors.js";
import { appMigrator, type AppMigrator, type AppliedMigration } from "../db/migrator.js";
import { migrationName } from "../db/migrations.js";
import type { Datastore } from "../db/datastore.js";
import type { KernelView } from "../options.js";
import type { RequestEvent } from "../event.js";
import { SchemaGate, type SchemaVerdict } from "./schema-gate.js";
import { unavailable, UNAVAILABLE_MESSAGES, type AppState } from "./availability.js";

/**
 * Whether a built app can serve: its setup (the database connection, plugin `ready` taps), run once
 * and retried after a failure, and whether its schema is migrated. Requests wait for the setup only:
 * `.build()` does not migrate and `handle()` serves, so what needs no table answers before the
 * migration, and what needs a missing one gets the gate's 503 "starting" (see `schemaVerdict()`).
 */
export class Readiness {
  readonly migrator: AppMigrator;
  /** Migrations the last run of the migrator applied (undefined before it ran). */
  applied: readonly string[] | undefined;
  readonly #gate: SchemaGate;
  #ready: Promise<void> | undefined;
  #isReady = false;
  #setupFailed = false;
  #closed = false;
  /** Setup failures already reported, so concurrent requests waiting on one attempt report it once. */
  readonly #reported = new WeakSet<object>();

  constructor(
    private readonly kernel: KernelView,
    private readonly store: Datastore,
  ) {
    this.#gate = new SchemaGate(() => store.migrator);
    this.migrator = this.#gate.guard(
      appMigrator(
        () => store.migrator,
        () => this.ready(),
        () => store.checkHistory(),
        (applied) => {
          this.applied = applied;
          return kernel.hooks.migrated.promise({ applied });
        },
      ),
    );
  }

  /** Set up and not closed: requests need not wait. */
  get serving(): boolean {
    return this.#isReady && !this.#closed;
  }

  close(): void {
    this.#closed = true;
  }

  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new TrellisError("KERNEL_CLOSED", "The app is closed: close() was called"));
    return (this.#ready ??= (async () => {
      try {
        await this.store.ready();
        await this.kernel.hooks.ready.promise();
        this.#isReady = true;
        this.#setupFailed = false;
      } catch (error) {
        // Not memoised: a database that was down at the first request may be up at the next.
        this.#ready = undefined;
        this.#setupFailed = true;
        throw error;
      }
    })());
  }

  state(): AppState {
    if (this.#closed) return "closed";
    if (this.#isReady) return this.#gate.current ? "ready" : "starting";
    return this.#setupFailed && !this.#ready ? "failed" : "starting";
  }

  /** Setup, then whether the schema is current; `state()` is exact once it settled. */
  async settle(): Promise<void> {
    await this.ready();
    await this.#gate.check();
  }

  /**
   * Setup, with its failure as the 503 a caller sees (the cause goes to `onError`, once per attempt).
   * The schema is not waited for: a query that meets a table not migrated yet is judged by `schemaVerdict()`.
   */
  async whenReady(onError: OnError, source: ErrorSource, event?: RequestEvent): Promise<void> {
    if (this.#closed) throw unavailable(UNAVAILABLE_MESSAGES.closed);
    try {
      await this.ready();
    } catch (error) {
      if (this.#closed) throw unavailable(UNAVAILABLE_MESSAGES.closed);
      if (typeof error !== "object" || error === null || !this.#reported.has(error)) {
        if (typeof error === "object" && error !== null) this.#reported.add(error);
        report(onError, error, source, event);
      }
      throw unavailable(UNAVAILABLE_MESSAGES.setup);
    }
  }

  /**
   * What a query naming a missing table or column means: `behind`, the app's migrations are pending
   * or running (the app is starting); `ahead`, the database holds versions this app does not register
   * (a newer replica migrated: a rolling upgrade); `current`, neither, so the query is wrong (a bug).
   */
  async schemaVerdict(): Promise<SchemaVerdict> {
    try {
      if (!(await this.#gate.check())) return "behind";
      const known = new Set(this.kernel.schemas.map((model, index) => migrationName(index, model.version)));
      for (const name of (await this.store.versionRecords()).keys()) if (!known.has(name)) return "ahead";
    } catch {
      // The database could not say (it went away meanwhile): the query's own error stands.
    }
    return "current";
  }

  async migrations(): Promise<AppliedMigration[]> {
    const all = await this.migrator.getMigrations();
    const records = await this.store.versionRecords();
    const schemas = this.kernel.schemas;
    return all.flatMap((migration, index) => {
      if (!migration.executedAt) return [];
      const record = records.get(migration.name);
      return [{ name: migration.name, version: record?.version ?? schemas[index]?.version ?? migration.name, executedAt: migration.executedAt, checksum: record?.checksum }];
    });
  }
}
