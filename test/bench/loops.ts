import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createServer } from "node:net";

/**
 * The loops a person waits on, each against today's way in the same run, on one project rendered by
 * `trellis new` whose `trellis` is this repository's build (run `npm run build` first):
 * - reload: from saving src/app.ts to the first 200 of the new code, `trellis dev` (the app reloaded
 *   against the open database) against `trellis dev --restart` (the whole process, as before);
 * - cli: a command (`migrate status`, `routes`) beside a running `trellis dev`, through its control
 *   channel, against the same command opening the database itself with no server running.
 */
const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "dist/bin.js");
const EDITS = 5;

export const cases = { reload, cli };

export async function run(): Promise<void> {
  await reload();
  await cli();
}

async function withProject<T>(body: (dir: string) => Promise<T>): Promise<T> {
  if (!existsSync(bin)) throw new Error("dist/bin.js is missing: run `npm run build` first");
  const dir = join(root, ".app", "bench", `loops-${randomBytes(4).toString("hex")}`);
  await mkdir(join(dir, ".."), { recursive: true });
  await command(root, ["new", dir, "--no-install"]);
  await mkdir(join(dir, "node_modules"));
  await symlink(root, join(dir, "node_modules", "trellis"), "dir");
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function command(cwd: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((done, fail) =>
    execFile(process.execPath, [bin, ...args], { cwd, env: { ...process.env, DATABASE_URL: undefined, NO_COLOR: "1" } }, (error, _stdout, stderr) =>
      error ? fail(new Error(`trellis ${args.join(" ")} failed: ${stderr}`)) : done(performance.now() - started),
    ),
  );
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((ready) => server.once("listening", ready));
  const { port } = server.address() as { port: number };
  await new Promise((closed) => server.close(closed));
  return port;
}

/** `trellis dev` (with `args`) in its own process group; resolves once /health answers 200. */
async function startDev(dir: string, port: number, args: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, "dev", ...args], { cwd: dir, env: { ...process.env, DATABASE_URL: undefined, PORT: String(port), NO_COLOR: "1" }, stdio: "ignore", detached: true });
  await answered(port, "/health", async (response) => response.status === 200);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((done) => child.once("exit", done));
  process.kill(-child.pid!, "SIGTERM");
  await exited;
}

/** Polls `path` every 5 ms until `accept` says yes (60 s at most). */
async function answered(port: number, path: string, accept: (response: Response) => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((wait) => setTimeout(wait, 5))) {
    const response = await fetch(`http://localhost:${port}${path}`).catch(() => undefined);
    if (response && (await accept(response))) return;
  }
  throw new Error(`${path} did not answer in 60 s`);
}

/** Milliseconds from writing app.ts with a new `/mark` answer to the first 200 carrying it, for each edit. */
async function edits(dir: string, port: number): Promise<number[]> {
  const appFile = join(dir, "src/app.ts");
  const original = await readFile(appFile, "utf8");
  const times: number[] = [];
  for (let edit = 0; edit < EDITS; edit++) {
    const started = performance.now();
    await writeFile(appFile, original.replace(".procedure(\n", `.route("GET", "/mark", () => ({ edit: ${edit} }))\n    .procedure(\n`));
    await answered(port, "/mark", async (response) => response.status === 200 && ((await response.json()) as { edit: number }).edit === edit);
    times.push(performance.now() - started);
  }
  await writeFile(appFile, original);
  return times;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const list = (values: number[]) => values.map((value) => value.toFixed(0)).join(" / ");

async function reload(): Promise<void> {
  await withProject(async (dir) => {
    const port = await freePort();
    const before = await startDev(dir, port, ["--restart"]);
    const restarted = await edits(dir, port).finally(() => stop(before));
    const now = await startDev(dir, port);
    const reloaded = await edits(dir, port).finally(() => stop(now));
    const ratio = median(restarted) / median(reloaded);
    console.log("\n## Edit to first 200 under `trellis dev` (save src/app.ts, poll the new route)");
    console.log(`  dev --restart (process and database restarted, as before)  ${list(restarted)} ms  (median ${median(restarted).toFixed(0)})`);
    console.log(`  dev (app reloaded, database kept open)                    ${list(reloaded)} ms  (median ${median(reloaded).toFixed(0)})`);
    console.log(`  ${ratio.toFixed(1)}x faster (target >= 10x: ${ratio >= 10 ? "OK" : "BELOW"}; target < 1500 ms: ${median(reloaded) < 1500 ? "OK" : "ABOVE"})`);
  });
}

async function cli(): Promise<void> {
  await withProject(async (dir) => {
    await command(dir, ["migrate", "up"]);
    const alone = { status: [] as number[], routes: [] as number[] };
    for (let round = 0; round < 3; round++) {
      alone.status.push(await command(dir, ["migrate", "status"]));
      alone.routes.push(await command(dir, ["routes"]));
    }
    const port = await freePort();
    const dev = await startDev(dir, port);
    const beside = { status: [] as number[], routes: [] as number[] };
    try {
      for (let round = 0; round < 3; round++) {
        beside.status.push(await command(dir, ["migrate", "status"]));
        beside.routes.push(await command(dir, ["routes"]));
      }
    } finally {
      await stop(dev);
    }
    console.log("\n## A CLI command, alone (it opens the database) and beside a running `trellis dev` (through it)");
    for (const name of ["status", "routes"] as const) {
      const label = name === "status" ? "migrate status" : "routes";
      console.log(`  ${label.padEnd(15)} alone ${list(alone[name])} ms, beside the server ${list(beside[name])} ms  (${(median(alone[name]) / median(beside[name])).toFixed(1)}x; target < 2000 ms: ${median(beside[name]) < 2000 ? "OK" : "ABOVE"})`);
    }
  });
}
