import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pgClientEnv } from "../../../kernel/db/pg-client-env.js";
import { CliError, green, say } from "../output.js";
import { onApp } from "../app-target.js";
import type { CommandTarget } from "../control/commands.js";
import { findProject } from "../project.js";

interface BackupOptions {
  /** `file` (the default, or a path) or `storage` (the app's storage adapter, so S3). */
  to?: string;
}

interface Backupable {
  backup(): Promise<Uint8Array>;
  ready(): Promise<void>;
}

/**
 * `trellis db backup [--to file|<path>|storage]`: the embedded database as a gzip tarball, through
 * the database object's own `backup()`; on PostgreSQL, `pg_dump --format=custom` when installed.
 * Beside a running server that holds the embedded data directory, the server takes the backup.
 */
export async function dbBackup(options: BackupOptions): Promise<number> {
  const project = findProject();
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const url = process.env.DATABASE_URL;
  if (url) {
    if (spawnSync("pg_dump", ["--version"], { stdio: "ignore" }).status !== 0) {
      throw new CliError("CLI_NO_PG_DUMP", "pg_dump is not installed, so a PostgreSQL database cannot be backed up from here.", "Install PostgreSQL's client tools (for example `apt-get install postgresql-client`).");
    }
    const file = destination(project.root, options.to, undefined, `backup-${stamp}.dump`);
    // The password in PGPASSWORD, not on the command line where `ps` shows it.
    const connect = pgClientEnv(url);
    ownerOnly(file);
    const run = spawnSync("pg_dump", ["--format=custom", `--file=${file}`, connect.url], { stdio: ["ignore", "inherit", "inherit"], env: connect.env });
    if (run.status !== 0) return 1;
    say(`${green("backed up")} PostgreSQL with pg_dump to ${file}`);
    return 0;
  }
  const name = `backup-${stamp}.tar.gz`;
  return onApp("db backup", { root: project.root, to: options.to, name }, backupOn);
}

/** The command's body: the backup taken by the database object the app was made with (here, or in the running server). */
export async function backupOn({ options }: CommandTarget, { root, to, name }: { root: string; to?: string; name: string }): Promise<number> {
  const db = options?.db as (Partial<Backupable> & { about?: { location?: string } }) | undefined;
  if (!db || typeof db.backup !== "function") {
    throw new CliError("CLI_NO_BACKUP", "This app's database has no backup of its own (it is not the embedded database, and DATABASE_URL is not set).", "Back up SQLite by copying its file while the app is stopped, or set DATABASE_URL for PostgreSQL.");
  }
  await db.ready?.();
  const bytes = await db.backup();
  if (to === "storage") {
    const key = `backups/${name}`;
    const storage = options?.storage as { set(key: string, bytes: Uint8Array): Promise<void> } | undefined;
    if (!storage) throw new CliError("CLI_NO_STORAGE", "--to storage needs the app to have a storage adapter.", "Pass storage to the App constructor, or back up to a file.");
    await storage.set(key, bytes);
    say(`${green("backed up")} the embedded database (${bytes.byteLength} bytes) to storage key ${key}`);
  } else {
    const file = destination(root, to, db.about?.location, name);
    ownerOnly(file);
    writeFileSync(file, bytes);
    say(`${green("backed up")} the embedded database (${bytes.byteLength} bytes) to ${file}`);
  }
  return 0;
}

/**
 * Where a backup goes: the path `--to` names, else `backups/` beside the embedded database's data
 * directory (`.data/backups` in a new project, `.app/backups` beside the default `.app/embedded`,
 * where the backups plugin writes too), else `.app/backups` in the project: never the project's
 * root, where a backup full of password hashes is one `git add .` from being committed.
 */
function destination(root: string, to: string | undefined, dataDir: string | undefined, name: string): string {
  if (to && to !== "file") return resolve(root, to);
  const directory = dataDir && isAbsolute(dataDir) ? join(dirname(dataDir), "backups") : join(root, ".app", "backups");
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  return join(directory, name);
}

/**
 * Creates (or empties) `file` readable by its owner only before anything is written to it: a backup
 * holds password hashes and session tokens. The chmod covers a file that was already there, whose
 * mode a write keeps; pg_dump, too, keeps the mode of a file it writes over.
 */
function ownerOnly(file: string): void {
  writeFileSync(file, new Uint8Array(), { mode: 0o600 });
  chmodSync(file, 0o600);
}
