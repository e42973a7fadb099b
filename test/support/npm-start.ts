import { spawn } from "node:child_process";
import { resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

export interface StartedBlog {
  /** `http://host:port` the blog printed. */
  url: string;
  stop(): Promise<void>;
}

/**
 * `npm start` (the blog) with `env` over this process's environment, in its own process group so
 * `stop()` ends tsx and node with it. Resolves once it prints its URL; rejects with its output when it
 * exits first.
 */
export function npmStart(env: Record<string, string>): Promise<StartedBlog> {
  // The blog runs as a user starts it, not as part of a test run (which would silence its banner).
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|JEST_WORKER_ID$|NODE_TEST_CONTEXT$)/.test(key)));
  const childEnv = { ...inherited, NODE_ENV: "development", ...env };
  const child = spawn("npm", ["start", "--silent"], { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"], env: childEnv });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGTERM");
    await exited;
  };
  return new Promise((resolveStart, reject) => {
    let output = "";
    child.stdout!.on("data", (chunk) => {
      output += chunk;
      const found = /listening on (http:\/\/[\w.:[\]-]+)/.exec(output);
      if (found) resolveStart({ url: found[1]!, stop });
    });
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => reject(Object.assign(new Error(`npm start exited with ${code}:\n${output}`), { code, output })));
  });
}
