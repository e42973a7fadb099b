import { spawn } from "node:child_process";
import { TrellisError } from "../../kernel/index.js";
import { BACKUPS_PG_DUMP } from "./errors.js";

/** How one backup is taken, and the file extension its bytes get. */
export interface BackupSource {
  extension: "tar.gz" | "dump";
  /** What the dashboard says the backup is. */
  describe: string;
  take(): Promise<Uint8Array>;
}

/** The embedded database's own backup: a gzip tarball of its data directory (kernel/embedded/backup.ts). */
export function embeddedSource(backup: () => Promise<Uint8Array>): BackupSource {
  return { extension: "tar.gz", describe: "embedded data directory, gzip tarball", take: backup };
}

/**
 * `pg_dump --format=custom` of the URL (compressed, restored with `pg_restore`): a consistent
 * snapshot taken without stopping writers, read from its output.
 */
export function pgDumpSource(url: string): BackupSource {
  return {
    extension: "dump",
    describe: "pg_dump, custom format",
    take: () =>
      new Promise((resolve, reject) => {
        const child = spawn("pg_dump", ["--format=custom", url], { stdio: ["ignore", "pipe", "pipe"] });
        const chunks: Buffer[] = [];
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.on("error", (error: NodeJS.ErrnoException) => {
          const missing = error.code === "ENOENT";
          reject(new TrellisError(BACKUPS_PG_DUMP, missing ? "pg_dump is not installed where the app runs, so PostgreSQL cannot be backed up from it: install PostgreSQL's client tools (apt-get install postgresql-client)" : `pg_dump could not start: ${error.message}`, { plugin: "backups", cause: error }));
        });
        child.on("close", (code) => {
          if (code === 0) return resolve(new Uint8Array(Buffer.concat(chunks)));
          // pg_dump's own words, with the password it may repeat hidden.
          const said = stderr.trim().replace(/\/\/[^@/\s]*@/g, "//***@") || `exit code ${code}`;
          reject(new TrellisError(BACKUPS_PG_DUMP, `pg_dump failed: ${said}`, { plugin: "backups" }));
        });
      }),
  };
}
