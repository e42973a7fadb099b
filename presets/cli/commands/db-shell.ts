import { spawn } from "node:child_process";
import { pgClientEnv } from "../../../kernel/db/pg-client-env.js";
import { importPeer } from "../../../kernel/runtime/peers.js";
import { CliError, say } from "../output.js";
import { findProject, loadApp } from "../project.js";

/** What the CLI needs of the embedded database object (`embedded()`, on the request thread). */
interface EmbeddedLike {
  readonly client: unknown;
  ready(): Promise<void>;
  close(): Promise<void>;
}

interface SocketServer {
  start(): Promise<void>;
  stop(): Promise<void>;
  getServerConn(): string;
}

/**
 * `trellis db shell [-- psql arguments]`: psql on DATABASE_URL; without it, on the project's
 * embedded database, served to psql on a loopback port by PGlite's socket server while this
 * process holds the data directory's lock (so the app must be stopped). When psql exits the
 * server stops and the lock is released; without psql the URL is printed and served until Ctrl-C.
 */
export async function dbShell(psqlArgs: string[]): Promise<number> {
  const project = findProject();
  const url = process.env.DATABASE_URL;
  if (url) {
    const code = await psql(url, psqlArgs);
    if (code === undefined) throw new CliError("CLI_NO_PSQL", "psql is not installed.", "Install PostgreSQL's client (for example `apt-get install postgresql-client`).");
    return code;
  }
  // The socket server needs the PGlite instance itself, in this process.
  process.env.TRELLIS_EMBEDDED_THREAD = "main";
  const { PGLiteSocketServer } = await importPeer<{ PGLiteSocketServer: new (options: { db: unknown; host: string; port: number }) => SocketServer }>(
    "@electric-sql/pglite-socket",
    "`trellis db shell` on the embedded database",
  );
  const database = embeddedOf(await loadProjectApp(project));
  const server = new PGLiteSocketServer({ db: database.client, host: "127.0.0.1", port: 0 });
  try {
    await database.ready();
    await server.start();
    const [host, port] = splitConn(server.getServerConn());
    const local = `postgresql://postgres@${host}:${port}/postgres?sslmode=disable`;
    const code = await psql(local, psqlArgs);
    if (code !== undefined) return code;
    say(`psql is not installed; the embedded database is served at ${local} until Ctrl-C`);
    await new Promise((stop) => {
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    return 0;
  } finally {
    await server.stop();
    await database.close();
  }
}

/** Loads the app, which opens (and locks) its embedded data directory; a running app holds the lock. */
async function loadProjectApp(project: ReturnType<typeof findProject>): Promise<unknown> {
  try {
    return await loadApp(project);
  } catch (error) {
    if ((error as { code?: string }).code !== "EMBEDDED_DIR_LOCKED") throw error;
    throw new CliError(
      "CLI_DB_LOCKED",
      `another process has this embedded database open (is the app running?). ${(error as Error).message}`,
      "Stop the app (one process at a time opens the data directory), then run `trellis db shell` again; while it runs, `trellis migrate`, `admin create`, `doctor` and `db backup` work through it, and the admin dashboard (/_admin) shows the data.",
    );
  }
}

function embeddedOf(app: unknown): EmbeddedLike {
  const db = (app as { options?: { db?: Partial<EmbeddedLike> & { live?: { kind?: string } } } }).options?.db;
  if (!db || db.live?.kind !== "pglite" || typeof db.ready !== "function" || typeof db.close !== "function") {
    throw new CliError(
      "CLI_DB_SHELL_NOT_EMBEDDED",
      "DATABASE_URL is not set and this app's database is not the embedded one, so there is no database for psql here.",
      "Set DATABASE_URL to the PostgreSQL database the app uses; open a SQLite file with sqlite3.",
    );
  }
  return db as EmbeddedLike;
}

function splitConn(conn: string): [string, string] {
  const colon = conn.lastIndexOf(":");
  return [conn.slice(0, colon), conn.slice(colon + 1)];
}

/**
 * Runs psql on the terminal; resolves with its exit code, or undefined when psql is not installed.
 * Ctrl-C belongs to psql (it cancels the running query): this process ignores it meanwhile.
 */
function psql(url: string, args: string[]): Promise<number | undefined> {
  const ignore = () => {};
  process.on("SIGINT", ignore);
  return new Promise<number | undefined>((resolveCode) => {
    // The password in PGPASSWORD, not on the command line where `ps` shows it.
    const connect = pgClientEnv(url);
    const child = spawn("psql", ["--dbname", connect.url, ...args], { stdio: "inherit", env: connect.env });
    child.on("error", (error: NodeJS.ErrnoException) => resolveCode(error.code === "ENOENT" ? undefined : 1));
    child.on("exit", (code, signal) => resolveCode(code ?? (signal ? 1 : 0)));
  }).finally(() => process.off("SIGINT", ignore));
}
