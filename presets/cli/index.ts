/**
 * The `trellis` command: one bin, a subcommand per task, each with `--help`. Exit codes: 0 done,
 * 1 failed (the message says why and how to fix it), 2 bad usage; `migrate check` adds 2 for pending
 * versions and 3 for drift, so a deploy script can branch on them.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { SURFACES } from "./commands/surfaces.js";
import { AUTH_METHODS } from "./commands/auth-methods.js";
import { CliError, dim, red } from "./output.js";

const program = new Command("trellis")
  .description("Create, run and operate Trellis apps.")
  .version(versionOf(), "-v, --version")
  .showHelpAfterError()
  .exitOverride();

/**
 * Each action resolves with its exit code; the process exits with it once output is flushed. A
 * command's module is loaded when it runs, so `--help` and each command load only what they use.
 */
const act =
  <A extends unknown[]>(run: (...args: A) => Promise<number>) =>
  async (...args: A) => {
    process.exitCode = await run(...args);
  };

program
  .command("new")
  .description("write a new project that installs, tests and serves with no edits")
  .argument("<dir>", "the folder to create")
  .option("--surfaces <list>", `comma-separated extras: ${SURFACES.join(", ")}`)
  .option("--auth <list>", `comma-separated sign-in methods beside email and password: ${AUTH_METHODS.join(", ")}`)
  .option("--template <name>", "the app to write: app (private notes, the default) or saas (team tasks: organizations, invitations, roles)")
  .option("--plugin", "write an in-house plugin package instead of an app")
  .option("--trellis <spec>", "how the project depends on Trellis (a version range, a tarball or a git URL)")
  .option("--no-install", "skip npm install")
  .action(act((dir: string, options) => import("./commands/new.js").then(({ create }) => create(dir, options))));

program
  .command("dev")
  .description("serve the app, reloaded on every change against the database it keeps open")
  .option("--server <file>", "the module that serves the app", "src/server.ts")
  .option("--restart", "restart the whole process on each change instead (the database reopened too)")
  .action(act((options) => import("./commands/serve.js").then(({ dev }) => dev(options))));
program.command("build").description("compile the project for production into dist/").action(act(() => import("./commands/serve.js").then(({ build }) => build())));
program.command("start").description("run the production build on plain Node").option("--server <file>", "the source module that serves the app", "src/server.ts").action(act((options) => import("./commands/serve.js").then(({ start }) => start(options))));

const migrate = program.command("migrate").description("schema versions: what is applied, what is pending, drift");
migrate.command("status").description("list applied and pending versions (exit 3 on drift)").action(act(() => import("./commands/migrate.js").then(({ migrateStatus }) => migrateStatus())));
migrate.command("up").description("apply every pending version").action(act(() => import("./commands/migrate.js").then(({ migrateUp }) => migrateUp())));
migrate.command("check").description("exit 0 when up to date, 2 when versions are pending, 3 on drift").action(act(() => import("./commands/migrate.js").then(({ migrateCheck }) => migrateCheck())));

program.command("routes").description("every procedure and route, with its permission and surfaces").action(act(() => import("./commands/routes.js").then(({ routes }) => routes())));

program
  .command("admin")
  .description("administrators")
  .command("create")
  .description("make the user with this email an admin, creating them if needed")
  .argument("<email>")
  .option("--password <password>", "password for a new user (default: generated and printed once)")
  .option("--name <name>", "name for a new user")
  .option("--role <role>", "the role to grant", "admin")
  .action(act((email: string, options) => import("./commands/admin.js").then(({ adminCreate }) => adminCreate(email, options))));

program.command("doctor").description("check Node, peers, the database, the secret and baseUrl").action(act(() => import("./commands/doctor.js").then(({ doctor }) => doctor())));
const db = program.command("db").description("the database");
db.command("shell")
  .description("psql on DATABASE_URL, else on the embedded database (the app stopped); psql's own arguments after --")
  .argument("[psql...]", "arguments for psql, after -- (e.g. -- -c \"select 1\")")
  .action(act((args: string[]) => import("./commands/db-shell.js").then(({ dbShell }) => dbShell(args))));
db.command("backup")
  .description("a consistent backup: the embedded database as a gzip tarball, PostgreSQL with pg_dump")
  .option("--to <target>", "file (default), a file path, or storage (the app's storage adapter)", "file")
  .action(act((options) => import("./commands/db-backup.js").then(({ dbBackup }) => dbBackup(options))));
db.command("restore")
  .description("restore a backup into an empty data directory (PostgreSQL: pg_restore)")
  .argument("<backup>", "the backup file")
  .option("--force", "replace what the data directory holds")
  .action(act((backup: string, options) => import("./commands/db-restore.js").then(({ dbRestore }) => dbRestore(backup, options))));

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with code 0; usage errors were printed by commander.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else if (error instanceof CliError) {
    process.stderr.write(`${red(`${error.code}`, process.stderr)}: ${error.message}\n${error.fix ? `  fix: ${error.fix}\n` : ""}`);
    process.exitCode = error.exitCode;
  } else {
    const failure = error as Error & { code?: string };
    process.stderr.write(`${red(failure.code ?? "ERROR", process.stderr)}: ${failure.message ?? String(error)}\n`);
    if (process.env.DEBUG) process.stderr.write(`${dim(String(failure.stack))}\n`);
    process.exitCode = 1;
  }
}

function versionOf(): string {
  for (const candidate of ["../../package.json", "../package.json"]) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(candidate, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (manifest.name === "trellis" && manifest.version) return manifest.version;
    } catch {
      // try the next layout
    }
  }
  return "0.0.0";
}
