import { TrellisError, definePlugin, missingPeers, type AppPlugin } from "../../kernel/index.js";
import { JOBS_PEER_MISSING, JOBS_SQLITE } from "./errors.js";
import { jobsSettings, type JobDefinitionOptions, type JobsConfig } from "./options.js";
import { JobsRuntime } from "./runtime.js";
import { Definitions } from "./registry.js";
import { jobsAdminSection } from "./admin.js";
import type { JobHandler, JobsService } from "./types.js";
import type { JobTenancy } from "./carried.js";

export type { JobsConfig, JobDefinitionOptions, Backoff, StandardSchema } from "./options.js";
export type { JobsService, JobHandler, JobRun, JobInfo, SendOptions, JobRecord, JobState, QueueInfo, StateCounts } from "./types.js";
export { EXPECTED_FAILURE } from "./run-job.js";
export type { AdminJobsRouter } from "./admin.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Background jobs on pg-boss: `define` at build time, `send` at request time; also `context.jobs`. */
    jobs: JobsService;
  }
}

/** The jobs plugin as the facade drives it: `.job()` and `.cron()` add kinds before build. */
export interface JobsPlugin extends AppPlugin {
  job(name: string, options: JobDefinitionOptions<any>, handler: JobHandler<any, any>): void;
  cron(name: string, expression: string, handler: JobHandler<any, any>, options?: JobDefinitionOptions<any> & { tz?: string }): void;
  /** Replaces the config (the facade's `.jobs(config)` after a `.job()` registered the plugin). */
  reconfigure(config: JobsConfig): void;
}

/**
 * Background jobs, cron and the `jobs` service, on pg-boss inside the app's own PostgreSQL
 * database (embedded or a server), through the app's Kysely instance. Stage `feature`: its
 * service exists before user plugins build and before the admin plugin, which reads it for
 * `_admin.jobs.*`; plugins that define kinds (mail, webhooks) list it as a dependency.
 */
export function jobsPlugin(config: JobsConfig = {}): JobsPlugin {
  let settings = jobsSettings(config);
  // Created now so that `.job()` and `.cron()` refuse a bad name or a duplicate at the call.
  const definitions = new Definitions();
  const plugin: AppPlugin = definePlugin({
      name: "jobs",
      stage: "feature",
      // `organizations`: built first, so a job sent in an organization carries it.
      optionalDependencies: ["telemetry", "organizations"],
      provides: ["jobs", "admin-section:jobs"],
      validate(ctx) {
        if (ctx.resources.kind === "sqlite") {
          throw new TrellisError(JOBS_SQLITE, ".jobs() needs PostgreSQL (embedded() or a server): pg-boss keeps its queues in PostgreSQL, and this app runs on SQLite", { plugin: "jobs", hook: "validate" });
        }
        const missing = missingPeers(["pg-boss"]);
        if (missing.length) throw new TrellisError(JOBS_PEER_MISSING, `.jobs() needs the optional package "pg-boss" (10.x), which is not installed. Install it: npm install pg-boss@10`, { plugin: "jobs", hook: "validate" });
      },
      build(ctx) {
        const runtime = new JobsRuntime(definitions, {
          kysely: ctx.resources.db,
          settings,
          logger: ctx.logger,
          report: (error) => ctx.report(error, "job"),
          telemetry: ctx.want("telemetry"),
          tenancy: ctx.want("organizations") as JobTenancy | undefined,
        });
        ctx.provide("jobs", runtime, { context: true });
        // With organizations, a signed-in caller's `context.jobs` is their own, so what they send
        // carries their active organization; everyone else shares the runtime.
        if (ctx.want("organizations")) {
          ctx.hooks.context.tap((context) => {
            if (context.session) (context as unknown as { jobs: JobsService }).jobs = runtime.within(context);
          });
        }
        // `_admin.jobs.*` when the app has `.admin()` (the admin plugin mounts it; unused otherwise).
        ctx.provide("admin-section:jobs", jobsAdminSection(runtime));
        ctx.hooks.sealed.tap((app) => runtime.attach(app));
        ctx.hooks.ready.tap(() => runtime.start());
        ctx.hooks.close.tap(() => runtime.stop());
      },
  });
  return Object.assign(plugin, {
    job: (name: string, options: JobDefinitionOptions<any>, handler: JobHandler<any, any>) => void definitions.define("app", name, options, handler),
    reconfigure: (next: JobsConfig) => void (settings = jobsSettings(next)),
    cron: (name: string, expression: string, handler: JobHandler<any, any>, options?: JobDefinitionOptions<any> & { tz?: string }) =>
      void definitions.cron("app", name, expression, handler, options),
  });
}
