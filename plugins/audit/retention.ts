import type { AuditEntries } from "./entries.js";

/** The job kind of the retention sweep, when the app has `.jobs()` (shown in `_admin.jobs.*`). */
export const RETAIN_JOB = "audit.retain";
/** Hourly, at a minute other schedules rarely take. */
export const RETAIN_CRON = "17 * * * *";
const HOUR_MS = 3_600_000;

/** Deletes the entries older than `retainMs`; how many. */
export function sweep(entries: AuditEntries, retainMs: number, now = Date.now()): Promise<number> {
  return entries.deleteBefore(new Date(now - retainMs));
}

/** Without the jobs plugin: a sweep every hour in this process (each replica sweeps; deleting twice is harmless). */
export function sweepHourly(run: () => Promise<unknown>, report: (error: unknown) => void): () => void {
  const timer = setInterval(() => void run().catch(report), HOUR_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}
