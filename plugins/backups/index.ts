import { TrellisError, definePlugin, type AppPlugin, type PluginContext } from "../../kernel/index.js";
import { backupsAdminSection } from "./admin.js";
import { Backups, type BackupsService } from "./backups.js";
import { BACKUPS_NO_STORAGE, BACKUPS_UNSUPPORTED } from "./errors.js";
import { backupsSettings, type BackupsConfig, type BackupsSettings } from "./options.js";
import { directoryPlace, storagePlace } from "./places.js";
import { everyMinute, parseCron } from "./schedule.js";
import { embeddedSource, pgDumpSource, type BackupSource } from "./source.js";

export type { BackupsConfig } from "./options.js";
export type { BackupsService, BackupFailure } from "./backups.js";
export type { BackupInfo } from "./places.js";
export type { AdminBackupsRouter, BackupsOverview } from "./admin.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Database backups: take one now, list and read the kept ones; also `context.backups`. */
    backups: BackupsService;
  }
}

/** The job kind of scheduled backups, when the app has `.jobs()` (shown in `_admin.jobs.*`). */
export const BACKUP_JOB = "backups.run";

interface JobsLike {
  cron(name: string, expression: string, handler: (run: { signal?: AbortSignal }) => Promise<unknown>, options?: Record<string, unknown>): void;
}

/**
 * Backups of the app's database while it serves: the embedded database's own tarball, or
 * `pg_dump` on PostgreSQL; to a directory or the app's storage adapter, the oldest beyond `keep`
 * deleted; scheduled by `every` through the jobs plugin when the app has it (one run per tick
 * across replicas), else by a timer in this process; `_admin.backups.*` through the admin
 * plugin's sections. A failed backup is logged, reported to `onError` and shown in the dashboard;
 * it never stops the app. Stage `feature`, after jobs (it defines its schedule there), before
 * admin (which mounts its section).
 */
export function backupsPlugin(config: BackupsConfig = {}): AppPlugin {
  const settings = backupsSettings(config);
  return definePlugin({
    name: "backups",
    stage: "feature",
    optionalDependencies: ["jobs"],
    provides: ["backups", "admin-section:backups"],
    validate(ctx) {
      sourceOf(ctx, settings);
      if (settings.to.kind === "storage" && !ctx.resources.storage) {
        throw new TrellisError(BACKUPS_NO_STORAGE, '.backups({ to: "storage" }) needs a storage adapter: pass storage to the App constructor, or back up to a directory', { plugin: "backups", hook: "validate" });
      }
    },
    build(ctx) {
      const source = sourceOf(ctx, settings);
      const place = settings.to.kind === "storage" ? storagePlace(ctx.resources.storage!) : directoryPlace(settings.to.path);
      const backups = new Backups({ source, place, keep: settings.keep, logger: ctx.logger });
      ctx.provide("backups", backups, { context: true });
      // A pg_dump still running is killed, not left behind the closed app.
      ctx.hooks.close.tap(async () => backups.close());
      const jobs = ctx.want("jobs") as JobsLike | undefined;
      const scheduler = settings.every === undefined ? null : jobs ? "jobs" : "process";
      if (settings.every !== undefined && jobs) {
        // A failure fails the job: the jobs engine logs it, reports it and retries once.
        jobs.cron(BACKUP_JOB, settings.every, ({ signal }: { signal?: AbortSignal }) => backups.take(signal));
      } else if (settings.every !== undefined) {
        let stop = () => {};
        ctx.hooks.ready.tap(async () => {
          stop = everyMinute(parseCron(settings.every!)!, () => void backups.take().catch((error: unknown) => ctx.report(error, "job")));
        });
        ctx.hooks.close.tap(async () => stop());
      }
      ctx.provide("admin-section:backups", backupsAdminSection({ backups, overview: { where: place.describe, kind: source.describe, every: settings.every ?? null, scheduler, keep: settings.keep } }));
    },
  });
}

/** The embedded database's own backup, or pg_dump on PostgreSQL with a URL; else why not. */
function sourceOf(ctx: PluginContext, settings: BackupsSettings): BackupSource {
  const { backup, kind } = ctx.resources;
  if (backup) return embeddedSource(backup);
  if (kind === "postgres" && settings.url) return pgDumpSource(settings.url);
  const why =
    kind === "postgres"
      ? "on PostgreSQL it runs pg_dump, which needs the database's URL: pass url, or set DATABASE_URL"
      : "this app runs on SQLite: back up its file with the server stopped, or use embedded() or PostgreSQL";
  throw new TrellisError(BACKUPS_UNSUPPORTED, `.backups() cannot back up this database: ${why}`, { plugin: "backups", hook: "validate" });
}
