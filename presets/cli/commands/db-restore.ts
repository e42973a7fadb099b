import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pgClientEnv } from "../../../kernel/db/pg-client-env.js";
import { restoreEmbedded } from "../../../kernel/embedded/backup.js";
import { CliError, green, say } from "../output.js";
import { appTarget, shortLived } from "../app-target.js";
import { findProject } from "../project.js";

interface RestoreOptions {
  force?: boolean;
}

/**
 * `trellis db restore <backup> [--force]`: a tarball from `trellis db backup` into the app's
 * embedded data directory, which must be empty unless `--force`; on PostgreSQL, `pg_restore` when
 * installed (`--clean --if-exists` with `--force`), as one transaction: a dump that fails part way
 * (truncated, corrupt, an object that already exists) changes nothing.
 */
export async function dbRestore(backup: string, options: RestoreOptions): Promise<number> {
  const project = findProject();
  const file = resolve(process.cwd(), backup);
  const url = process.env.DATABASE_URL;
  if (url) {
    if (spawnSync("pg_restore", ["--version"], { stdio: "ignore" }).status !== 0) {
      throw new CliError("CLI_NO_PG_RESTORE", "pg_restore is not installed, so a PostgreSQL backup cannot be restored from here.", "Install PostgreSQL's client tools (for example `apt-get install postgresql-client`).");
    }
    // The password in PGPASSWORD, not on the command line where `ps` shows it.
    const connect = pgClientEnv(url);
    const run = spawnSync("pg_restore", ["--single-transaction", ...(options.force ? ["--clean", "--if-exists"] : []), `--dbname=${connect.url}`, file], { stdio: ["ignore", "inherit", "inherit"], env: connect.env });
    if (run.status !== 0) {
      process.stderr.write("pg_restore failed (its error is above); it ran as one transaction, so the database was left as it was\n");
      return 1;
    }
    say(`${green("restored")} ${file} into PostgreSQL with pg_restore`);
    return 0;
  }
  // The app tells where its data directory is; it is loaded with that directory left unopened
  // (no lock, no fresh cluster written into an empty one), as `trellis routes` loads it.
  const { app } = await appTarget(project, { database: false });
  const db = (app as { options?: { db?: { backup?: unknown; about?: { location?: string }; close?(): Promise<void> } } }).options?.db;
  if (!db || typeof db.backup !== "function" || !db.about?.location || db.about.location.startsWith("memory://")) {
    throw new CliError("CLI_NO_RESTORE", "This app's database is not an embedded database with a data directory, and DATABASE_URL is not set.", "Restore into an app using embedded({ dataDir }), or set DATABASE_URL for PostgreSQL.");
  }
  const dataDir = db.about.location;
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0 && !options.force) {
    throw new CliError("DB_RESTORE_NOT_EMPTY", `Cannot restore into ${dataDir}: it is not empty.`, "Restore into an empty data directory, or pass --force to replace what it holds (with the server stopped).");
  }
  shortLived();
  // The restore takes the data directory's lock itself: a running server holding it is refused.
  await restoreEmbedded(readFileSync(file), dataDir, { force: true });
  say(`${green("restored")} ${file} into ${dataDir}`);
  return 0;
}
