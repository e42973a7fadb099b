import type { Kysely } from "kysely";
import { MAX_JSON_DEPTH, RpcError, TrellisError, importPeer, nestedDeeperThan, type AppRpcContext, type Logger, type SealedApp } from "../../kernel/index.js";
import { carriedFrom, wrap, type JobTenancy } from "./carried.js";
import { engineDb, type EngineDb } from "./engine-db.js";
import { JOBS_BAD_DATA, JOBS_UNKNOWN } from "./errors.js";
import { JobTable, describeDefinitions, queueInfos, totals } from "./inspect.js";
import type { JobDefinitionOptions, JobsSettings } from "./options.js";
import { Definitions } from "./registry.js";
import { parse } from "./run-job.js";
import { JobsTelemetry } from "./telemetry.js";
import { KindWorker, type Fetcher } from "./worker.js";
import type { Telemetry } from "../../kernel/index.js";
import type { JobHandler, JobRecord, JobState, JobsService, QueueInfo, SendOptions, StateCounts } from "./types.js";

type PgBoss = import("pg-boss");

export interface RuntimeDeps {
  kysely: Kysely<any>;
  settings: JobsSettings;
  logger: Logger | undefined;
  report(error: unknown): void;
  /** The telemetry plugin's service, when the app has it. */
  telemetry: Telemetry | undefined;
  /** The organizations plugin's service, when the app has organizations: jobs carry the sender's. */
  tenancy?: JobTenancy | undefined;
}

/**
 * pg-boss on the app's database. Definitions are collected while the app builds; the `ready` hook
 * starts the engine (installs or migrates its schema, creates one queue per kind, schedules the
 * crons, starts one worker per kind) and `close()` stops it gracefully.
 */
export class JobsRuntime implements JobsService {
  readonly #db: EngineDb;
  readonly #table: JobTable;
  readonly #running = new Set<AbortController>();
  readonly #workers = new Map<string, KindWorker>();
  readonly #telemetry: JobsTelemetry | undefined;
  #boss: PgBoss | undefined;
  #sealed: SealedApp | undefined;
  #closed = false;
  /** Every method bound to this runtime: the prototype of each context's own `context.jobs`. */
  readonly #bound: JobsService;

  constructor(
    readonly definitions: Definitions,
    private readonly deps: RuntimeDeps,
  ) {
    this.#db = engineDb(deps.kysely);
    this.#table = new JobTable(this.#db, deps.settings.schema);
    this.#telemetry = deps.telemetry && new JobsTelemetry(deps.telemetry, () => this.queues());
    const names = ["define", "cron", "send", "drain", "cancel", "retry", "get", "list", "queues", "counts", "describe"] as const;
    this.#bound = Object.freeze(Object.fromEntries(names.map((name) => [name, (this[name] as (...args: unknown[]) => unknown).bind(this)]))) as unknown as JobsService;
  }

  /**
   * `context.jobs` for one context: `send` carries the context's active organization (confirmed
   * by the organizations plugin), so the job runs in it. Only apps with organizations use it.
   */
  within(context: AppRpcContext): JobsService {
    const send: JobsService["send"] = (name, data, options) => this.#send(name, data, options, context);
    // Defined, not assigned: the frozen prototype's `send` is read-only.
    return Object.create(this.#bound, { send: { value: send, enumerable: true } }) as JobsService;
  }

  attach(sealed: SealedApp): void {
    this.#sealed = sealed;
  }

  define<Data>(name: string, options: JobDefinitionOptions<Data>, handler: JobHandler<Data>): void {
    this.definitions.define("plugin", name, options, handler as JobHandler<any>);
  }

  cron(name: string, expression: string, handler: JobHandler<undefined>, options?: JobDefinitionOptions<undefined> & { tz?: string }): void {
    this.definitions.cron("plugin", name, expression, handler as JobHandler<any>, options);
  }

  async start(): Promise<void> {
    if (this.#boss) return;
    const { settings } = this.deps;
    const { default: PgBossClass } = await importPeer<{ default: typeof import("pg-boss") }>("pg-boss", ".jobs()");
    this.definitions.seal();
    const definitions = this.definitions.all();
    const crons = definitions.filter((definition) => definition.cron);
    const boss = new PgBossClass({
      db: this.#db,
      schema: settings.schema,
      supervise: settings.work,
      schedule: settings.work && crons.length > 0,
      maintenanceIntervalSeconds: settings.maintenanceInterval,
      cronMonitorIntervalSeconds: settings.cronInterval,
      cronWorkerIntervalSeconds: Math.min(45, Math.max(1, Math.ceil(settings.pollingInterval))),
      pollingIntervalSeconds: settings.pollingInterval,
    } as ConstructorParameters<typeof PgBossClass>[0]);
    boss.on("error", (error) => this.deps.report(error));
    await boss.start();
    try {
      // Dead-letter targets are foreign keys: every queue exists before any policy names one.
      // What an earlier start left (every start after the first, a test's copy of a migrated
      // database) is read in two queries; a queue or schedule already as defined is left as it is.
      const queues = new Map((await boss.getQueues()).map((queue) => [queue.name, queue as unknown as Record<string, unknown>]));
      for (const { name } of definitions) if (!queues.has(name)) await boss.createQueue(name).catch(() => undefined);
      for (const { name, policy } of definitions) {
        const queue = queues.get(name);
        if (!queue || Object.entries(policy).some(([key, value]) => queue[key] !== value)) await boss.updateQueue(name, { name, ...policy });
      }
      // Each row holds the zone it was scheduled in (a column pg-boss's types leave out).
      const schedules = (await boss.getSchedules()) as (Awaited<ReturnType<PgBoss["getSchedules"]>>[number] & { timezone?: string })[];
      for (const { name, cron } of crons) {
        const kept = schedules.find((schedule) => schedule.name === name);
        // The data and options a schedule is sent with are the same every time: the expression and the zone tell it apart.
        if (!kept || kept.cron !== cron!.expression || kept.timezone !== (cron!.tz ?? "UTC")) await boss.schedule(name, cron!.expression, {}, { tz: cron!.tz });
      }
      for (const schedule of schedules) {
        if (!crons.some(({ name }) => name === schedule.name)) await boss.unschedule(schedule.name);
      }
      if (this.#closed) throw new Error("The app was closed while the jobs engine started");
      this.#boss = boss;
      if (settings.work) for (const definition of definitions) this.#work(boss, definition);
    } catch (error) {
      // A failed start leaves no timers behind; the app's next `ready()` starts a fresh engine.
      this.#boss = undefined;
      await boss.stop({ graceful: false, close: false, wait: true }).catch(() => undefined);
      throw error;
    }
  }

  #work(boss: PgBoss, definition: ReturnType<Definitions["all"]>[number]): void {
    const deps = {
      sealed: () => this.#sealed!,
      logger: this.deps.logger,
      complete: (name: string, id: string, output: unknown) => boss.complete(name, id, output as object),
      fail: (name: string, id: string, error: object) => boss.fail(name, id, error),
      report: this.deps.report,
      running: this.#running,
      telemetry: this.#telemetry,
      tenancy: this.deps.tenancy,
      within: (context: AppRpcContext) => this.within(context),
    };
    // Not pg-boss's `work()`: it runs a batch as one unit (the next fetch waits for its slowest
    // job) and, once the batch is over, completes every job of it again, which could mark a job
    // that failed and is being retried elsewhere as completed.
    const worker = new KindWorker(boss as unknown as Fetcher, definition, deps, this.deps.settings.pollingInterval * 1000);
    this.#workers.set(definition.name, worker);
    worker.start();
  }

  async stop(): Promise<void> {
    this.#closed = true;
    const boss = this.#boss;
    this.#boss = undefined;
    if (boss) {
      const timeout = this.deps.settings.shutdownTimeout * 1000;
      // Handlers still running when the grace period ends are told so, and fail their jobs, which
      // run again later (on another replica, or after a restart).
      const abort = setTimeout(() => {
        for (const controller of this.#running) controller.abort(new Error("the app shut down"));
      }, timeout);
      try {
        const workers = [...this.#workers.values()];
        this.#workers.clear();
        await Promise.all(workers.map((worker) => worker.stop()));
      } finally {
        clearTimeout(abort);
      }
      await boss.stop({ graceful: true, wait: true, close: false, timeout });
    }
    await this.#db.close();
  }

  send(name: string, data?: unknown, options: SendOptions = {}): Promise<string | null> {
    return this.#send(name, data, options, undefined);
  }

  async #send(name: string, data: unknown, options: SendOptions = {}, context: AppRpcContext | undefined): Promise<string | null> {
    const definition = this.definitions.get(name);
    if (!definition) throw new TrellisError(JOBS_UNKNOWN, `send("${name}"): no job of that name is defined (define it with .job(), .cron() or jobs.define())`, { plugin: "jobs" });
    let value = data;
    if (definition.input) {
      try {
        value = await parse(definition.input, data, name);
      } catch (error) {
        throw new RpcError("BAD_REQUEST", { message: (error as Error).message, data: { code: JOBS_BAD_DATA, issues: (error as { issues?: string[] }).issues } });
      }
    }
    // Stored as jsonb and handed back to the worker: held to the bound every JSON write has.
    if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
      throw new RpcError("BAD_REQUEST", { message: `send("${name}"): the job's data is nested more than ${MAX_JSON_DEPTH} levels deep`, data: { code: JOBS_BAD_DATA } });
    }
    const carried = context ? await carriedFrom(this.deps.tenancy, context) : null;
    const boss = await this.#started();
    // pg-boss checks the keys present, not their values: only the options given are passed.
    const { startAfter, singletonKey, priority } = options;
    const sendOptions: Record<string, unknown> = {};
    if (startAfter !== undefined) sendOptions.startAfter = startAfter instanceof Date ? startAfter.toISOString() : startAfter;
    if (singletonKey !== undefined) Object.assign(sendOptions, { singletonKey, singletonSeconds: options.singletonSeconds ?? 60 });
    if (priority !== undefined) sendOptions.priority = priority;
    const stored = wrap(value ?? null, carried);
    const enqueue = () => boss.send(name, JSON.stringify(stored) as never, sendOptions);
    const id = await (this.#telemetry ? this.#telemetry.send(name, enqueue) : enqueue());
    // Wakes this process's worker; on PGlite its fetch queues behind an open transaction, so it
    // sees the job right after the commit.
    if (id) this.#workers.get(name)?.notify();
    return id;
  }

  async drain(): Promise<void> {
    await this.#started();
    if (!this.deps.settings.work) throw new Error("jobs.drain(): this app does not run jobs (.jobs({ work: false }))");
    // A handler may send jobs of another kind: passes go on until one runs nothing.
    for (;;) {
      const ran = await Promise.all([...this.#workers.values()].map((worker) => worker.drain()));
      if (ran.every((count) => count === 0)) return;
    }
  }

  async #started(): Promise<PgBoss> {
    if (!this.#boss) await this.#sealed?.ready();
    if (!this.#boss) throw new Error("The jobs engine is not running (the app is closed or not ready)");
    return this.#boss;
  }

  async cancel(name: string, id: string): Promise<boolean> {
    const boss = await this.#started();
    if (!UUID.test(id) || !this.definitions.get(name)) return false;
    const result = (await boss.cancel(name, id)) as unknown as { affected: number };
    return result.affected > 0;
  }

  async retry(name: string, id: string): Promise<boolean> {
    const boss = await this.#started();
    if (!UUID.test(id) || !this.definitions.get(name)) return false;
    const result = (await boss.retry(name, id)) as unknown as { affected: number };
    if (result.affected === 0) return false;
    this.#workers.get(name)?.notify();
    return true;
  }

  async get(name: string, id: string): Promise<JobRecord | null> {
    await this.#started();
    return this.#table.get(name, id);
  }

  async list(options: { queue?: string; state?: JobState; take?: number; skip?: number }): Promise<JobRecord[]> {
    await this.#started();
    return this.#table.list({ queue: options.queue, state: options.state, take: options.take ?? 50, skip: options.skip ?? 0 });
  }

  async queues(): Promise<QueueInfo[]> {
    await this.#started();
    return queueInfos(this.definitions.all(), this.#table);
  }

  async counts(): Promise<StateCounts> {
    return totals(await this.queues());
  }

  describe(): { queues: string[]; schedules: { name: string; cron: string; tz: string }[] } {
    return describeDefinitions(this.definitions.all());
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
