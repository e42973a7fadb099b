import { resolve } from "node:path";
import { TrellisError } from "../../kernel/index.js";
import { BACKUPS_BAD_OPTION } from "./errors.js";
import { parseCron } from "./schedule.js";

/** `.backups(config)`. */
export interface BackupsConfig {
  /**
   * A cron expression (five fields, UTC: minute hour day month weekday) for scheduled backups:
   * through the jobs plugin when the app has `.jobs()` (one run per tick across every replica),
   * else a timer in this process. Without it, backups are taken on demand only.
   * @default undefined (none scheduled)
   */
  every?: string;
  /**
   * Where backups go: `"storage"` (the app's storage adapter, so S3, under `backups/`) or a directory.
   * @default "<cwd>/.app/backups"
   */
  to?: "storage" | (string & {});
  /**
   * How many backups to keep; older ones are deleted after each new one.
   * @default 7
   */
  keep?: number;
  /**
   * On PostgreSQL, the URL `pg_dump` connects to (it must be installed where the app runs).
   * @default process.env.DATABASE_URL
   */
  url?: string;
}

export interface BackupsSettings {
  every: string | undefined;
  to: { kind: "storage" } | { kind: "directory"; path: string };
  keep: number;
  url: string | undefined;
}

/** The config with its defaults, or an error listing what is wrong. */
export function backupsSettings(config: BackupsConfig): BackupsSettings {
  const problems: string[] = [];
  const { every, to, keep = 7, url = process.env.DATABASE_URL } = config;
  if (every !== undefined) {
    if (typeof every !== "string" || !parseCron(every)) problems.push(`every must be a cron expression with five fields (minute hour day month weekday), e.g. "0 3 * * *"; got ${JSON.stringify(every)}`);
  }
  if (to !== undefined && (typeof to !== "string" || to.trim() === "")) problems.push(`to must be "storage" or a directory path; got ${JSON.stringify(to)}`);
  if (!Number.isInteger(keep) || keep < 1) problems.push(`keep must be a whole number above 0; got ${JSON.stringify(keep)}`);
  if (problems.length) throw new TrellisError(BACKUPS_BAD_OPTION, `.backups(): ${problems.join("; ")}`, { plugin: "backups" });
  return {
    every: every?.trim(),
    to: to === "storage" ? { kind: "storage" } : { kind: "directory", path: resolve(to ?? resolve(process.cwd(), ".app", "backups")) },
    keep,
    url: url || undefined,
  };
}
