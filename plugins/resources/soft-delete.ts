import { TrellisError, type AppDatabase, type DatabaseKind, type PluginContext, type TableModel } from "../../kernel/index.js";
import { RESOURCE_SOFT_DELETE } from "./errors.js";

/** The column a soft-deleting resource stamps instead of deleting the row. */
export const DELETED_AT = "deletedAt";
/** The job kind of the purge, when the app has `.jobs()` (shown in `_admin.jobs.*`). */
export const PURGE_JOB = "resources.purge";
const PURGE_CRON = "23 * * * *";
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface SoftDelete {
  /** Rows deleted longer ago than this are removed for good by the purge. */
  purgeAfterMs: number;
}

export interface SoftDeleteOptions {
  /**
   * How long a deleted row can be restored before the hourly purge removes it: a whole number of
   * days (`"30d"`) or hours (`"12h"`).
   * @default "30d"
   */
  purgeAfter?: string;
}

/** A resource's soft delete, or undefined; throws when its table has no nullable `deletedAt` timestamp. */
export function softDeleteOf(name: string, table: TableModel, option: boolean | SoftDeleteOptions | undefined): SoftDelete | undefined {
  if (!option) return undefined;
  const column = table.columns[DELETED_AT];
  if (!column || column.type !== "timestamp" || !column.nullable) {
    throw new TrellisError(RESOURCE_SOFT_DELETE, `Resource "${name}" soft-deletes, so its table needs a nullable timestamp column "${DELETED_AT}": add ${DELETED_AT}: t.timestamp().nullable()`, { plugin: "resources", hook: "validate" });
  }
  const text = option === true ? "30d" : (option.purgeAfter ?? "30d");
  const match = /^(\d{1,5})([dh])$/.exec(text);
  if (!match || Number(match[1]) === 0) {
    throw new TrellisError(RESOURCE_SOFT_DELETE, `Resource "${name}": softDelete.purgeAfter must be a whole number of days or hours, such as "30d" or "12h"; got ${JSON.stringify(text)}`, { plugin: "resources", hook: "validate" });
  }
  return { purgeAfterMs: Number(match[1]) * (match[2] === "d" ? DAY_MS : HOUR_MS) };
}

/** What `context.softDelete` offers: the purge, run now. */
export interface SoftDeleteService {
  /** Removes the rows soft-deleted longer ago than their resource's `purgeAfter`; how many. */
  purge(): Promise<number>;
}

interface JobsLike {
  cron(name: string, expression: string, handler: () => Promise<unknown>): void;
}

/**
 * The purge of every soft-deleting resource: hourly through the jobs plugin (once per tick across
 * replicas) when the app has it, else a timer in this process. Also `context.softDelete.purge()`.
 */
export function schedulePurge(ctx: PluginContext, tables: ReadonlyMap<string, SoftDelete>, db: AppDatabase<any>, kind: DatabaseKind): void {
  if (tables.size === 0) return;
  const purge = async () => {
    let removed = 0;
    for (const [table, { purgeAfterMs }] of tables) {
      const before = new Date(Date.now() - purgeAfterMs);
      const result = await db.deleteFrom(table).where(DELETED_AT, "<", kind === "sqlite" ? before.toISOString() : before).executeTakeFirst();
      removed += Number(result.numDeletedRows);
    }
    return removed;
  };
  ctx.provide("softDelete", { purge } satisfies SoftDeleteService, { context: true });
  const jobs = ctx.want("jobs") as JobsLike | undefined;
  if (jobs) return jobs.cron(PURGE_JOB, PURGE_CRON, purge);
  let timer: ReturnType<typeof setInterval> | undefined;
  ctx.hooks.ready.tap(async () => {
    timer = setInterval(() => void purge().catch((error: unknown) => ctx.report(error, "job")), HOUR_MS);
    timer.unref?.();
  });
  ctx.hooks.close.tap(async () => clearInterval(timer));
}
