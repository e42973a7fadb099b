import { TrellisError } from "../../kernel/index.js";
import { JOBS_BAD_OPTION } from "./errors.js";

/** `.jobs(config)`. */
export interface JobsConfig {
  /**
   * The PostgreSQL schema pg-boss keeps its tables in (apps sharing a database use one each).
   * @default "pgboss"
   */
  schema?: string;
  /**
   * Seconds between two polls of an idle queue. A job sent by this process wakes its worker at
   * once; one sent by another replica waits at most this long.
   * @default 1
   */
  pollingInterval?: number;
  /**
   * Seconds `close()` waits for running handlers before failing them (they run again later).
   * @default 10
   */
  shutdownTimeout?: number;
  /**
   * Seconds between maintenance runs (jobs whose process died are failed, then retried; old jobs
   * archived). One replica runs it per interval.
   * @default 60
   */
  maintenanceInterval?: number;
  /**
   * Seconds between two checks of the cron schedules (1 to 30). One replica checks per interval,
   * and each tick sends one job whichever replica sees it.
   * @default 30
   */
  cronInterval?: number;
  /**
   * Runs handlers in this process; `false` only sends (a replica that serves requests only).
   * @default true
   */
  work?: boolean;
}

export interface JobsSettings {
  schema: string;
  pollingInterval: number;
  shutdownTimeout: number;
  maintenanceInterval: number;
  cronInterval: number;
  work: boolean;
}

/** Retry delays: `false` retries at once; otherwise after `delay` seconds, doubled each attempt (with jitter) when `exponential`. */
export type Backoff = false | { delay?: number; exponential?: boolean };

/** What a job kind declares besides its handler (`define(name, options, handler)`, `.job(...)`). */
export interface JobDefinitionOptions<Input = unknown> {
  /** Validates `data` at `send()` (a 400 in a procedure) and again before the handler runs. Any Standard Schema (zod). */
  input?: StandardSchema<Input>;
  /**
   * Retries after the first attempt fails; then the job is `failed` (the dead letter state).
   * @default 2
   */
  retry?: number;
  /** @default { delay: 1, exponential: true } */
  backoff?: Backoff;
  /**
   * Handlers of this kind running at once in one process.
   * @default 1
   */
  concurrency?: number;
  /**
   * Seconds a handler may run; then it fails (and is retried). Also how long a job whose process
   * died stays active before it runs again.
   * @default 900
   */
  timeout?: number;
  /** Another job kind that receives the data of jobs that failed for good. */
  deadLetter?: string;
  /** pg-boss's name for `retry` (accepted so options written for pg-boss keep their meaning). */
  retryLimit?: number;
  /** pg-boss's name for `backoff.delay`, in seconds. */
  retryDelay?: number;
  /** pg-boss's name for `backoff.exponential`. */
  retryBackoff?: boolean;
}

/** The Standard Schema interface (zod, valibot, arktype), the part a job needs. */
export interface StandardSchema<Output = unknown> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

type StandardResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] }[] };

/** pg-boss's per-queue options from a definition. */
export interface QueuePolicy {
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  expireInSeconds: number;
  deadLetter?: string;
}

const NAME = /^[A-Za-z0-9_][\w.\-/]{0,99}$/;
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertJobName(name: string, what: string): void {
  if (typeof name !== "string" || !NAME.test(name) || name.startsWith("__pgboss")) {
    throw bad(`${what} name "${name}" must be letters, digits, "_", "-", "." or "/" (at most 100)`);
  }
}

export function queuePolicy(name: string, options: JobDefinitionOptions<any>): QueuePolicy {
  const retry = options.retry ?? options.retryLimit ?? 2;
  if (!Number.isInteger(retry) || retry < 0) throw bad(`job "${name}": retry must be an integer >= 0 (got ${retry})`);
  const timeout = options.timeout ?? 900;
  if (!Number.isInteger(timeout) || timeout < 1) throw bad(`job "${name}": timeout must be a whole number of seconds >= 1 (got ${timeout})`);
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100) throw bad(`job "${name}": concurrency must be an integer from 1 to 100 (got ${concurrency})`);
  const backoff = options.backoff ?? (options.retryDelay !== undefined || options.retryBackoff !== undefined ? { delay: options.retryDelay ?? 1, exponential: options.retryBackoff ?? false } : { delay: 1, exponential: true });
  const delay = backoff === false ? 0 : (backoff.delay ?? 1);
  if (!Number.isInteger(delay) || delay < 0) throw bad(`job "${name}": backoff.delay must be a whole number of seconds >= 0 (got ${delay})`);
  if (options.deadLetter !== undefined) assertJobName(options.deadLetter, `job "${name}": deadLetter`);
  // The handler's own timer fires first; pg-boss's expiry (a second later) is what recovers a job
  // whose process died, and never races a handler that is still being timed.
  const policy: QueuePolicy = { retryLimit: retry, retryDelay: delay, retryBackoff: backoff !== false && (backoff.exponential ?? true), expireInSeconds: timeout + 1 };
  // pg-boss checks the keys present, not their values: an absent dead letter has no key.
  if (options.deadLetter !== undefined) policy.deadLetter = options.deadLetter;
  return policy;
}

export function jobsSettings(config: JobsConfig = {}): JobsSettings {
  const settings: JobsSettings = {
    schema: config.schema ?? "pgboss",
    pollingInterval: config.pollingInterval ?? 1,
    shutdownTimeout: config.shutdownTimeout ?? 10,
    maintenanceInterval: config.maintenanceInterval ?? 60,
    cronInterval: config.cronInterval ?? 30,
    work: config.work ?? true,
  };
  if (!SCHEMA.test(settings.schema)) throw bad(`.jobs({ schema }) must be a lowercase SQL identifier (got "${settings.schema}")`);
  if (!(settings.pollingInterval >= 0.5)) throw bad(`.jobs({ pollingInterval }) must be at least 0.5 seconds (got ${settings.pollingInterval})`);
  if (!(settings.shutdownTimeout >= 0)) throw bad(`.jobs({ shutdownTimeout }) must be >= 0 seconds`);
  if (!Number.isInteger(settings.maintenanceInterval) || settings.maintenanceInterval < 1) throw bad(`.jobs({ maintenanceInterval }) must be a whole number of seconds >= 1 (got ${settings.maintenanceInterval})`);
  // A check is skipped when the previous one is not quite an interval old, so two can be two
  // intervals apart; a tick is sent while less than 60 s old: two intervals must fit in a minute.
  if (!Number.isInteger(settings.cronInterval) || settings.cronInterval < 1 || settings.cronInterval > 30) throw bad(`.jobs({ cronInterval }) must be a whole number of seconds from 1 to 30 (got ${settings.cronInterval})`);
  return settings;
}

function bad(message: string): TrellisError {
  return new TrellisError(JOBS_BAD_OPTION, message, { plugin: "jobs" });
}
