import type { AppRpcContext, Logger } from "../../kernel/index.js";
import type { JobDefinitionOptions } from "./options.js";

/** What a running job knows about itself. */
export interface JobInfo {
  id: string;
  name: string;
  /** 1 for the first run, 2 for the first retry, ... */
  attempt: number;
  /** Attempts allowed in all (`retry + 1`). */
  attempts: number;
  /** The organization it was sent in (`context.jobs.send` during a request with an active organization), else null. */
  organizationId: string | null;
}

/**
 * A handler's argument. `context` is the app's context as a procedure sees it (database, services,
 * `context.jobs`), without a request: `user` and `session` are null. A job sent during a request
 * with an active organization runs in it: `context.organizations` answers with the sender's
 * membership there, and tenant-scoped resources are scoped to it.
 */
export interface JobRun<Data, Context = AppRpcContext> {
  data: Data;
  context: Context;
  job: JobInfo;
  /** Aborted when the handler's `timeout` passes or the app shuts down. */
  signal: AbortSignal;
  logger: Logger | undefined;
}

/** Its result is stored as the job's output; a throw fails the attempt (retried while `retry` allows). */
export type JobHandler<Data, Context = AppRpcContext> = (run: JobRun<Data, Context>) => unknown | Promise<unknown>;

/** `send()` options. */
export interface SendOptions {
  /** Not before this time: a Date, an ISO string, or seconds from now. */
  startAfter?: Date | string | number;
  /**
   * Deduplication: a second send with the same key in the same window of `singletonSeconds` (windows
   * are aligned to the clock) is dropped, and `send` resolves null.
   */
  singletonKey?: string;
  /** @default 60 when `singletonKey` is set */
  singletonSeconds?: number;
  /**
   * Higher runs first.
   * @default 0
   */
  priority?: number;
}

/** States a job passes through; `failed` is the dead letter state (no retries left). */
export type JobState = "created" | "retry" | "active" | "completed" | "cancelled" | "failed";

export interface JobRecord {
  id: string;
  queue: string;
  state: JobState;
  data: unknown;
  /** The organization it was sent in, or null. */
  organizationId: string | null;
  /** Attempts made so far (a job waiting for its first run has 0). */
  attempts: number;
  /** Attempts allowed in all. */
  maxAttempts: number;
  /** The last failure's message (failed and retrying jobs), or null. */
  error: string | null;
  /** What the handler returned (completed jobs), or null. */
  output: unknown;
  priority: number;
  singletonKey: string | null;
  createdAt: Date;
  startAfter: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

export type StateCounts = Record<JobState, number>;

export interface QueueInfo {
  name: string;
  kind: "job" | "cron";
  /** `app`, or the plugin that defined it. */
  owner: string;
  cron: string | null;
  tz: string | null;
  retry: number;
  counts: StateCounts;
}

/**
 * The `jobs` service: `context.jobs` in procedures and handlers, `ctx.want("jobs")` in plugins.
 * Plugins define their job kinds while the app builds and send at request time.
 */
export interface JobsService {
  /** Defines a job kind (build time only). */
  define<Data = unknown>(name: string, options: JobDefinitionOptions<Data>, handler: JobHandler<Data>): void;
  /** Defines a schedule (build time only): one `handler` run per tick across every replica. */
  cron(name: string, expression: string, handler: JobHandler<undefined>, options?: JobDefinitionOptions<undefined> & { tz?: string }): void;
  /**
   * Queues a job; resolves its id (null when a `singletonKey` dropped it). Called inside
   * `db.transact(...)`, the job exists only if that transaction commits.
   */
  send(name: string, data?: unknown, options?: SendOptions): Promise<string | null>;
  /**
   * Runs every job that is due now in this process (jobs they send included) and resolves once none
   * is waiting or running; jobs scheduled for later stay queued. For tests and scripts (`t.jobs.drain()`).
   */
  drain(): Promise<void>;
  /** Cancels a job that has not finished; false when there is no such job or it already ended. */
  cancel(name: string, id: string): Promise<boolean>;
  /** Runs a failed job again; false when there is no such failed job. */
  retry(name: string, id: string): Promise<boolean>;
  /** One job with its state and attempts, or null. */
  get(name: string, id: string): Promise<JobRecord | null>;
  /** Jobs of a queue, newest first. */
  list(options: { queue?: string; state?: JobState; take?: number; skip?: number }): Promise<JobRecord[]>;
  /** Every defined queue with its counts by state. */
  queues(): Promise<QueueInfo[]>;
  /** Counts by state over every queue. */
  counts(): Promise<StateCounts>;
  /** Defined queues and schedules, for the start banner (no database access). */
  describe(): { queues: string[]; schedules: { name: string; cron: string; tz: string }[] };
}
