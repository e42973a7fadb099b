/**
 * `npm run bench -- runtimes`: the same app (test/runtimes/smoke-app.mjs, the built package on the
 * embedded database) served by Node (`trellis/node`), Bun (`trellis/bun`) and Deno (`trellis/deno`)
 * in turn, each alone, driven over HTTP by autocannon from this process: a signed-in user's list of
 * 20 notes and a get by key. Figures are median req/s over alternating rounds, as ratios to Node.
 */
import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../support/browser.js";
import { freshBuild } from "../support/built-package.js";
import { median } from "./telemetry-sdk.js";

const root = resolve(import.meta.dirname, "../..");
const APP = join(root, "test/runtimes/smoke-app.mjs");
const DURATION = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 10;

const RUNTIMES: Record<string, string[]> = {
  node: [process.execPath, APP, "node"],
  bun: [join(root, "node_modules/.bin/bun"), APP, "bun"],
  deno: [join(root, "node_modules/.bin/deno"), "run", "-A", "--node-modules-dir=manual", "--no-lock", APP, "deno"],
};

interface Served {
  url: string;
  cookie: string;
  id: number;
  child: ChildProcess;
}

/** Starts the app on `runtime`, signs a user up and gives them 20 notes. */
async function start(runtime: string, dataDir: string): Promise<Served> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const [bin, ...args] = RUNTIMES[runtime]!;
  const { VITEST: _v, NODE_ENV: _n, DATABASE_URL: _d, ...env } = process.env;
  const child = spawn(bin!, args, { cwd: root, env: { ...env, PORT: String(port), APP_BASE_URL: url, DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  while (!/is listening on/.test(output)) {
    if (child.exitCode !== null) throw new Error(`${runtime} exited with ${child.exitCode}:\n${output}`);
    await new Promise((wait) => setTimeout(wait, 100));
  }
  const signUp = await fetch(`${url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify({ email: "bench@example.com", password: "correct-horse-battery-staple", name: "Bench" }),
  });
  if (!signUp.ok) throw new Error(`sign-up on ${runtime}: ${signUp.status} ${await signUp.text()}`);
  const cookie = signUp.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
  let id = 0;
  for (let i = 0; i < 20; i++) {
    const created = await fetch(`${url}/rpc/note/create`, { method: "POST", headers: { "content-type": "application/json", cookie, origin: url }, body: JSON.stringify({ json: { title: `note ${i}` } }) });
    id = ((await created.json()) as { json: { id: number } }).json.id;
  }
  return { url, cookie, id, child };
}

async function stop(served: Served): Promise<void> {
  served.child.kill("SIGTERM");
  if (served.child.exitCode === null && served.child.signalCode === null) await new Promise((done) => served.child.once("exit", done));
}

const CASES = {
  "list 20": (served: Served) => ({ path: "/rpc/note/list", body: { take: 20 } }),
  "get by key": (served: Served) => ({ path: "/rpc/note/get", body: { where: { id: served.id } } }),
};

async function drive(served: Served, name: keyof typeof CASES, duration = DURATION): Promise<number> {
  const { path, body } = CASES[name](served);
  const result = await autocannon({
    url: served.url,
    connections: CONNECTIONS,
    duration,
    requests: [{ method: "POST", path, headers: { "content-type": "application/json", cookie: served.cookie }, body: JSON.stringify({ json: body }) }],
  });
  if (result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} non-2xx answers`);
  if (result.errors > 0) console.log(`    (${name}: ${result.errors} errors or timeouts)`);
  return result.requests.average;
}

export async function run(): Promise<void> {
  console.log(`\n## runtimes: the built package on Node, Bun and Deno (embedded database, ${CONNECTIONS} connections, ${DURATION} s per case and round, ${ROUNDS} rounds, median req/s)`);
  if (!freshBuild()) throw new Error("the runtimes benchmark serves the built package: run `npm run build` first");
  const dir = await mkdtemp(join(tmpdir(), "trellis-bench-runtimes-"));
  const figures: Record<string, Record<string, number[]>> = {};
  try {
    // One runtime serves at a time (each alone on the cores); rounds alternate the runtimes.
    for (let round = 0; round < ROUNDS; round++) {
      for (const runtime of Object.keys(RUNTIMES)) {
        const served = await start(runtime, join(dir, `${runtime}-${round}`));
        try {
          await drive(served, "list 20", 1);
          for (const name of Object.keys(CASES) as (keyof typeof CASES)[]) ((figures[name] ??= {})[runtime] ??= []).push(await drive(served, name));
        } finally {
          await stop(served);
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`${"case".padEnd(14)}${Object.keys(RUNTIMES).map((runtime) => runtime.padStart(16)).join("")}`);
  for (const [name, byRuntime] of Object.entries(figures)) {
    const node = median(byRuntime.node!);
    const cells = Object.keys(RUNTIMES).map((runtime) => {
      const value = median(byRuntime[runtime]!);
      return `${Math.round(value)}/s ${(value / node).toFixed(2)}x`.padStart(16);
    });
    console.log(`${name.padEnd(14)}${cells.join("")}`);
  }
}
