import { spawn, spawnSync } from "node:child_process";
import { pgClientEnv } from "../../../kernel/db/pg-client-env.js";
import { appTarget, quickServer } from "../app-target.js";
import { callRemote } from "../control/client.js";
import type { ControlRecord } from "../control/channel.js";
import { CliError, dim, say } from "../output.js";
import { findProject } from "../project.js";
import { promptBeside } from "./db-shell-prompt.js";
import type { ShellArgs } from "./db-shell-server.js";

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
 * embedded database. Beside a running server (`trellis dev`, `trellis start`) that holds it, the
 * server serves it to psql on a Unix socket through its control channel (or, without psql, the
 * CLI's own prompt sends it each statement). With no server running, this process opens it, serves
 * it to psql on a loopback port with PGlite's socket server and holds the data directory's lock
 * meanwhile; when psql exits the server stops and the lock is released; without psql the URL is
 * printed and served until Ctrl-C.
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
  const quick = quickServer(project);
  const target = quick ? { server: quick } : await loadProjectApp(project);
  if (target.server) return shellBeside(target.server, psqlArgs);
  const { importPeer } = await import("../../../kernel/runtime/peers.js");
  const { PGLiteSocketServer } = await importPeer<{ PGLiteSocketServer: new (options: { db: unknown; host: string; port: number }) => SocketServer }>(
    "@electric-sql/pglite-socket",
    "`trellis db shell` on the embedded database",
  );
  const database = embeddedOf(target.app);
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

/**
 * psql on the running server's database, through a socket it serves for this shell alone; the
 * CLI's own prompt when psql is not installed, or the server cannot serve a socket (pglite-socket
 * is not installed where it runs).
 */
async function shellBeside(server: ControlRecord, psqlArgs: string[]): Promise<number> {
  if (psqlInstalled()) {
    let dir: string | undefined;
    try {
      dir = ((await callRemote(server, "db shell", { op: "open" } satisfies ShellArgs)).value as { dir: string }).dir;
    } catch (error) {
      if ((error as CliError).code !== "PEER_MISSING") throw error;
      say(dim(`${(error as Error).message}: using the CLI's own prompt instead of psql`));
    }
    if (dir) {
      try {
        return (await psql(`postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${SOCKET_PORT}`, psqlArgs)) ?? 1;
      } finally {
        await callRemote(server, "db shell", { op: "close", dir } satisfies ShellArgs).catch(() => {});
      }
    }
  }
  if (psqlArgs.length > 0) throw new CliError("CLI_NO_PSQL", `psql is not installed, so its arguments (${psqlArgs.join(" ")}) have nothing to run them.`, "Install PostgreSQL's client (for example `apt-get install postgresql-client`), or pipe the statements in: `echo \"select 1\" | trellis db shell`.");
  return promptBeside(server);
}

/** psql's name for a server's socket in the folder it is given (`host=<folder>`), on the default port; the server side (db-shell-server.ts) names its socket with it. */
export const SOCKET_PORT = 5432;

function psqlInstalled(): boolean {
  return !spawnSync("psql", ["--version"], { stdio: "ignore" }).error;
}

/**
 * Loads the app, which opens (and locks) its embedded data directory; or, when a server holding it
 * answers on its control channel, names that server. A running app without one holds the lock.
 */
async function loadProjectApp(project: ReturnType<typeof findProject>): Promise<{ app: unknown; server?: undefined } | { server: ControlRecord }> {
  try {
    const { app, server } = await appTarget(project, { database: true });
    return server ? { server } : { app };
  } catch (error) {
    if ((error as { code?: string }).code !== "EMBEDDED_DIR_LOCKED") throw error;
    throw new CliError(
      "CLI_DB_LOCKED",
      `another process has this embedded database open (is the app running?). ${(error as Error).message}`,
      "Stop the app (one process at a time opens the data directory), then run `trellis db shell` again; a server started by `trellis dev` or `trellis start` (or `serve()`) runs it through its control channel.",
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
