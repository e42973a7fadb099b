import type { JobDefinitionOptions, JobsService, SendOptions, StandardSchema } from "../plugins/jobs/index.js";

/**
 * `context.jobs` as the facade types it: `send` accepts the names of the jobs declared so far with
 * `.job()`, each with its input's type. `M` maps job names to their data.
 */
export type TypedJobs<M> = Omit<JobsService, "send"> & {
  /** Phantom: the job map, read back when the next `.job()` grows it. */
  readonly "~jobs"?: M;
  send<N extends keyof M & string>(name: N, ...rest: undefined extends M[N] ? [data?: M[N], options?: SendOptions] : [data: M[N], options?: SendOptions]): Promise<string | null>;
};

/** The job map carried by a context delta (`{}` before the first `.job()`). */
export type JobMapOf<Extra> = Extra extends { jobs?: { readonly "~jobs"?: infer M } } ? (unknown extends M ? {} : M) : {};

/** The data a job's `input` schema accepts (its input type), or `unknown` without a schema. */
export type JobInput<O> = O extends { input: StandardSchema<any> & { "~standard": { types?: { input: infer I } | undefined } } } ? I : unknown;
/** What the handler receives (the schema's output type). */
export type JobOutput<O> = O extends { input: StandardSchema<infer T> } ? T : unknown;

/** The extra context after `.job(name, options)`: `jobs.send` also takes `name`. */
export type WithJob<Extra, N extends string, O> = Omit<Extra, "jobs"> & { jobs: TypedJobs<JobMapOf<Extra> & { [K in N]: JobInput<O> }> };

/** After `.jobs()`: `context.jobs` exists (sending only to declared jobs). */
export type WithJobs<Extra> = Omit<Extra, "jobs"> & { jobs: TypedJobs<JobMapOf<Extra>> };

export type CronOptions = Omit<JobDefinitionOptions, "input" | "concurrency"> & {
  /**
   * The time zone the expression is read in (an IANA name).
   * @default "UTC"
   */
  tz?: string;
};
