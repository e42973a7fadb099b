import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { freePort } from "../support/browser.js";

const run = promisify(execFile);

/** Runs an npm command in a project, as a user's shell does; rejects with its output on failure. */
export const npm = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) => run("npm", args, { cwd, env: { ...process.env, CI: "", NO_COLOR: "1", ...env }, maxBuffer: 64 * 1024 * 1024 });

/** Starts `npm start` (or `command`) on a free port and resolves with /health's answer once it serves. */
export async function startAndProbe(project: string, command: string[] = ["npm", "start"]): Promise<{ status: number; body: unknown; seconds: number }> {
  const started = performance.now();
  // A port nothing listens on now (a random one could be another file's server, whose /health answers).
  const port = String(await freePort());
  // The embedded database, as a new project starts (DATABASE_URL from the test run would mean PostgreSQL, and pg is not installed).
  const { DATABASE_URL: _unused, ...env } = process.env;
  const [bin, ...args] = command;
  const server = spawn(bin!, args, { cwd: project, env: { ...env, PORT: port, NODE_ENV: "" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  server.stdout.on("data", (chunk) => (output += chunk));
  server.stderr.on("data", (chunk) => (output += chunk));
  try {
    for (let attempt = 0; attempt < 240; attempt++) {
      if (server.exitCode !== null) throw new Error(`${command.join(" ")} exited with ${server.exitCode}:\n${output}`);
      const health = await fetch(`http://localhost:${port}/health`).catch(() => undefined);
      if (health) return { status: health.status, body: await health.json(), seconds: (performance.now() - started) / 1000 };
      await new Promise((wait) => setTimeout(wait, 250));
    }
    throw new Error(`${command.join(" ")} did not serve within a minute:\n${output}`);
  } finally {
    // The command's process group: npm, the CLI and the server it runs (gone already if it failed).
    try {
      process.kill(-server.pid!, "SIGTERM");
    } catch {
      // exited on its own: the error above says why
    }
  }
}

