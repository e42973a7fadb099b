import { spawn, spawnSync } from "node:child_process";
import { CliError } from "../output.js";
import { findProject } from "../project.js";

/**
 * `trellis db shell`: psql on DATABASE_URL. The embedded database has no socket of its own; it
 * needs PGlite's socket server (`@electric-sql/pglite-socket`) in the project, and the app stopped.
 */
export async function dbShell(): Promise<number> {
  findProject();
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new CliError(
      "CLI_DB_SHELL_EMBEDDED",
      "DATABASE_URL is not set, so this project uses the embedded database, which `trellis db shell` cannot open yet.",
      "Run psql against PostgreSQL by setting DATABASE_URL, or inspect the embedded data with the admin dashboard (/_admin).",
    );
  }
  if (spawnSync("psql", ["--version"], { stdio: "ignore" }).status !== 0) {
    throw new CliError("CLI_NO_PSQL", "psql is not installed.", "Install PostgreSQL's client (for example `apt-get install postgresql-client`).");
  }
  return new Promise((resolveCode) => {
    const child = spawn("psql", [url], { stdio: "inherit" });
    child.on("exit", (code) => resolveCode(code ?? 1));
  });
}
