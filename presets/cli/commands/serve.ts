import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { CliError, dim, say } from "../output.js";
import { findProject, type Project } from "../project.js";

export interface ServeCommandOptions {
  /** The module that serves the app. @default "src/server.ts" */
  server?: string;
  /** `trellis dev`: restart the whole process (and reopen the database) on each change, instead of reloading the app in process. @default false */
  restart?: boolean;
}

/** Runs a command in the project and resolves with its exit code, forwarding Ctrl-C and SIGTERM. */
function run(project: Project, command: string, args: string[]): Promise<number> {
  return new Promise((resolveCode, reject) => {
    const child = spawn(command, args, { cwd: project.root, stdio: "inherit", env: process.env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolveCode(code ?? (signal ? 128 : 1));
    });
  });
}

function serverOf(project: Project, options: ServeCommandOptions): string {
  const server = options.server ?? "src/server.ts";
  if (!existsSync(join(project.root, server))) {
    throw new CliError("CLI_NO_SERVER", `There is no ${server} to serve.`, "Pass --server <file>, or create src/server.ts calling serve(app) from trellis/node.");
  }
  return server;
}

function envFlags(project: Project): string[] {
  return existsSync(join(project.root, ".env")) ? ["--env-file=.env"] : [];
}

/**
 * `trellis dev`: the app reloaded in this process on every change of a file it imports, against the
 * database opened once (dev/supervisor.ts); with `--restart`, the server under `tsx watch`, the
 * whole process restarted each time.
 */
export async function dev(options: ServeCommandOptions): Promise<number> {
  const project = findProject();
  const server = serverOf(project, options);
  if (!options.restart) return (await import("../dev/supervisor.js")).superviseServer(project, server);
  let tsx: string;
  try {
    tsx = createRequire(join(project.root, "package.json")).resolve("tsx/cli");
  } catch {
    throw new CliError("CLI_NO_TSX", "`trellis dev` runs TypeScript through tsx, which this project does not have.", "npm install --save-dev tsx");
  }
  say(dim(`watching ${server} and what it imports`));
  return run(project, process.execPath, [tsx, "watch", ...envFlags(project), server]);
}

/** `trellis build`: the project compiled by its own TypeScript (tsconfig.build.json when present) into dist/. */
export async function build(): Promise<number> {
  const project = findProject();
  let tsc: string;
  try {
    tsc = createRequire(join(project.root, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    throw new CliError("CLI_NO_TYPESCRIPT", "`trellis build` compiles with the project's TypeScript, which is not installed.", "npm install --save-dev typescript");
  }
  const config = existsSync(join(project.root, "tsconfig.build.json")) ? "tsconfig.build.json" : "tsconfig.json";
  const code = await run(project, process.execPath, [tsc, "-p", config]);
  if (code === 0) say(`built into ${relative(process.cwd(), join(project.root, "dist")) || "dist"}/: run it with \`trellis start\``);
  return code;
}

/** `trellis start`: the built server on plain Node (no TypeScript loader, no rebuild). */
export async function start(options: ServeCommandOptions): Promise<number> {
  const project = findProject();
  const server = (options.server ?? "src/server.ts").replace(/\.[mc]?ts$/, ".js");
  const built = join("dist", server);
  if (!existsSync(join(project.root, built))) throw new CliError("CLI_NOT_BUILT", `There is no ${built}.`, "Run `trellis build` first (or `npm run build`).");
  return run(project, process.execPath, ["--enable-source-maps", ...envFlags(project), built]);
}
