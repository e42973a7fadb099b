import { spawn } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { TrellisError, pgClientEnv } from "../../kernel/index.js";
import { BACKUPS_PG_DUMP } from "./errors.js";

/** How one backup is taken, and the file extension its bytes get. */
export interface BackupSource {
  extension: "tar.gz" | "dump";
  /** What the dashboard says the backup is. */
  describe: string;
  /** The backup's bytes as they are made; the stream errors when taking it fails or `signal` aborts. */
  take(signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
}

/** The embedded database's own backup: a gzip tarball of its data directory (kernel/embedded/backup.ts). */
export function embeddedSource(backup: () => Promise<Uint8Array>): BackupSource {
  return {
    extension: "tar.gz",
    describe: "embedded data directory, gzip tarball",
    take: async () => {
      const bytes = await backup();
      return new ReadableStream({ start: (controller) => (controller.enqueue(bytes), controller.close()) });
    },
  };
}

/**
 * `pg_dump --format=custom` of the URL (compressed, restored with `pg_restore`): a consistent
 * snapshot taken without stopping writers, streamed from its output as it comes. The password goes
 * in `PGPASSWORD`, not on its command line; an abort (the app closing) kills it.
 */
export function pgDumpSource(url: string): BackupSource {
  return {
    extension: "dump",
    describe: "pg_dump, custom format",
    take: async (signal) => {
      const connect = pgClientEnv(url);
      const child = spawn("pg_dump", ["--format=custom", connect.url], { stdio: ["ignore", "pipe", "pipe"], env: connect.env, signal });
      const out = new PassThrough();
      let stderr = "";
      let failed = false;
      const fail = (error: Error) => {
        failed = true;
        out.destroy(error);
      };
      child.stdout.pipe(out, { end: false });
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("error", (error: NodeJS.ErrnoException) => {
        if (error.name === "AbortError") return fail(new TrellisError(BACKUPS_PG_DUMP, "pg_dump was stopped: the app is closing", { plugin: "backups", cause: error }));
        const missing = error.code === "ENOENT";
        fail(new TrellisError(BACKUPS_PG_DUMP, missing ? "pg_dump is not installed where the app runs, so PostgreSQL cannot be backed up from it: install PostgreSQL's client tools (apt-get install postgresql-client)" : `pg_dump could not start: ${error.message}`, { plugin: "backups", cause: error }));
      });
      child.on("close", (code) => {
        if (failed) return;
        if (code === 0) return void out.end();
        // pg_dump's own words, with any password it may repeat hidden.
        const said = stderr.trim().replace(/\/\/[^@/\s]*@/g, "//***@") || `exit code ${code}`;
        fail(new TrellisError(BACKUPS_PG_DUMP, `pg_dump failed: ${said}`, { plugin: "backups" }));
      });
      // Whoever stops reading (a failed write) stops pg_dump too.
      out.on("close", () => void (child.exitCode === null && child.signalCode === null && child.kill()));
      return Readable.toWeb(out) as ReadableStream<Uint8Array>;
    },
  };
}
