import { resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import type { CommandTarget } from "./control/commands.js";
import { runRemote } from "./control/client.js";
import { runningServer, type ControlRecord } from "./control/channel.js";
import { findProject, loadApp, type LoadedApp, type Project } from "./project.js";

/** The project's app, here, or the server that holds its embedded data directory. */
export type AppTarget = { app: LoadedApp; server?: undefined } | { app: LoadedApp; server: ControlRecord };

/**
 * Loads the project's app the way a command needs it. `database: false` (`trellis routes`): the
 * embedded database is never opened, so the command works whoever holds it. Otherwise, when a
 * running server holds the data directory and answers on its control channel, the app is built on
 * a database that never opens and `server` names the server to run the command in.
 */
export async function appTarget(project: Project, { database }: { database: boolean }): Promise<AppTarget> {
  // Loaded here, not with this module: a command beside a running server (`onApp`'s quick path)
  // needs none of the database stack.
  const { hostEmbedded, unopenedEmbedded } = await import("../../kernel/embedded/lend.js");
  let server: ControlRecord | undefined;
  hostEmbedded((dataDir) => {
    if (!database) return unopenedEmbedded(dataDir, "this command needs no database");
    server = runningServer(dataDir);
    return server ? unopenedEmbedded(dataDir, `the server (pid ${server.pid}) holds it and runs the command`) : undefined;
  });
  try {
    const app = await loadApp(project);
    return server ? { app, server } : { app };
  } finally {
    hostEmbedded(undefined);
  }
}

/**
 * Runs a command on the project's app: through the running server that holds its data directory
 * (by `name`, control/commands.ts), else on the app built here and closed after.
 */
export async function onApp<A>(name: string, args: A, run: (target: CommandTarget, args: A) => Promise<number>, { database = true } = {}): Promise<number> {
  const project = findProject();
  const quick = quickServer(project);
  if (quick) return runRemote(quick, name, args);
  shortLived();
  const { app, server } = await appTarget(project, { database });
  if (server) return runRemote(server, name, args);
  const built = app.build();
  try {
    return await run({ built, options: app.options }, args);
  } finally {
    await built.close();
  }
}

/**
 * A server started in this project that holds one of the usual data directories (`DATA_DIR`, `.data`,
 * `.app/embedded`), found without loading the app: a command then costs a round trip, not an app's
 * worth of imports. Not with DATABASE_URL set, where the app would not use the embedded database.
 */
export function quickServer(project: Project): ControlRecord | undefined {
  if (process.env.DATABASE_URL) return undefined;
  const dataDir = process.env.DATA_DIR;
  const candidates = [dataDir && `${dataDir}/db`, dataDir, ".data/db", ".data", ".app/embedded"].filter((dir): dir is string => Boolean(dir) && !dir!.includes("://"));
  for (const dir of candidates) {
    const server = runningServer(resolve(project.root, dir));
    if (server?.cwd === project.root) return server;
  }
  return undefined;
}

/**
 * For a command that opens the embedded database, runs a few statements and exits: V8 compiles
 * PGlite's WebAssembly quickly (Liftoff) and recompiles the functions that run often with its
 * optimizing compiler, which PostgreSQL's start-up alone triggers: about half a second of CPU, a
 * third of the database's start, spent on code a command then barely runs. A hundred times
 * the budget keeps start-up on the quick code while a long statement (a migration over a large
 * table, a backup) still gets optimized. Not for `dev`, `start` or `db shell`, which keep serving.
 * Process-wide, so it is set before the database opens. The database runs on the command's own
 * thread too (unless TRELLIS_EMBEDDED_THREAD says otherwise): a command sends one statement at a
 * time, and a database thread would cost a second Node environment and PGlite loaded twice (about
 * 0.25 s of CPU).
 */
export function shortLived(): void {
  process.env.TRELLIS_EMBEDDED_THREAD ??= "main";
  try {
    setFlagsFromString("--wasm-tiering-budget=180000000");
  } catch {
    // A runtime without V8's flags: start-up costs what it costs.
  }
}
