import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { within } from "./within.js";

const root = resolve(import.meta.dirname, "../..");

export interface StartedBlog {
  /** `http://host:port` the blog printed. */
  url: string;
  stop(): Promise<void>;
}

/** The blog runs as a user starts it, not as part of a test run (which would silence its banner). */
function userEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|JEST_WORKER_ID$|NODE_TEST_CONTEXT$)/.test(key)));
  return { ...inherited, NODE_ENV: "development", ...env };
}

/**
 * `npm start` (the blog) with `env` over this process's environment, in its own process group so
 * `stop()` ends tsx and node with it. Resolves once it prints its URL; rejects with its output when it
 * exits first.
 */
export function npmStart(env: Record<string, string>): Promise<StartedBlog> {
  return started("npm", ["start", "--silent"], userEnv(env));
}

/** `npm start` is the build, then the server: package.json's script, split at its `&&`. */
function startScript(): { build: string; serve: string } {
  const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
  const [build, serve, ...rest] = script.split(" && ");
  if (!build || !serve || rest.length) throw new Error(`package.json's start script is not "<build> && <serve>": ${script}`);
  return { build, serve };
}

/** With node_modules/.bin first on PATH, as npm runs a script. */
const scriptEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...env, PATH: `${join(root, "node_modules/.bin")}${delimiter}${env.PATH ?? ""}` });

/** The first half of `npm start`: the blog built into .app/blog. */
export async function buildBlog(): Promise<void> {
  await promisify(execFile)("sh", ["-c", startScript().build], { cwd: root, env: scriptEnv(userEnv({})), maxBuffer: 16 * 1024 * 1024 });
}

/**
 * The second half of `npm start`: the server of the blog {@link buildBlog} built, for tests that start
 * the blog many times (the build is the same each time; test/examples/blog-start.test.ts runs the
 * whole of `npm start`). Resolves and rejects as {@link npmStart}.
 */
export function serveBuiltBlog(env: Record<string, string>): Promise<StartedBlog> {
  return started("sh", ["-c", startScript().serve], scriptEnv(userEnv(env)));
}

function started(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<StartedBlog> {
  const child = spawn(command, args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"], env });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) process.kill(-child.pid!, "SIGTERM");
    await within(exited, 30_000, `the blog (process group ${child.pid}) exiting after SIGTERM`).catch((error: Error) => {
      process.kill(-child.pid!, "SIGKILL");
      throw error;
    });
  };
  return new Promise((resolveStart, reject) => {
    let output = "";
    // Building and starting take seconds; on a loaded machine, tens of them.
    const timer = setTimeout(() => {
      if (running()) process.kill(-child.pid!, "SIGKILL");
      reject(Object.assign(new Error(`${[command, ...args].join(" ")} printed no URL within 100 s:\n${output}`), { code: null, output }));
    }, 100_000);
    child.stdout!.on("data", (chunk) => {
      output += chunk;
      const found = /listening on (http:\/\/[\w.:[\]-]+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolveStart({ url: found[1]!, stop });
      }
    });
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${[command, ...args].join(" ")} exited with ${code}:\n${output}`), { code, output }));
    });
  });
}
