import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { cp, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../support/browser.js";
import { freshBuild } from "../support/built-package.js";
import { groupRunning } from "../support/children.js";
import { memoryTemplate } from "../../kernel/embedded/template.js";

/**
 * `trellis dev` keeps the database and reloads the app; CLI commands run through the server that
 * holds the data directory (`trellis dev`, and `trellis start`). One project rendered by `trellis
 * new` (with live queries), its `trellis` this repository's build, copied once so each server has a
 * project and data directory of its own: the `trellis dev` tests and the `trellis start` one (its
 * build first) run at once. Every process runs dist/bin.js.
 */
const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "dist/bin.js");
const built = freshBuild();
if (!built) console.log("skipping the dev loop's process tests: dist/ is missing or older than the source (npm run build)");

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `trellis args` in `cwd`; `input` is piped to its stdin (`echo ... | trellis db shell`). A
 * command still running after `timeoutMs` is ended (its outcome then fails the test).
 */
function trellis(cwd: string, args: string[], env: Record<string, string | undefined> = {}, input?: string, timeoutMs = 60_000): Promise<Outcome> {
  const started = performance.now();
  return new Promise((done) => {
    const child = execFile(process.execPath, [bin, ...args], { cwd, env: { ...process.env, DATABASE_URL: undefined, NO_COLOR: "1", ...env }, timeout: timeoutMs }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: performance.now() - started });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** A project folder and the port its server listens on. */
interface Project {
  dir: string;
  port: number;
}

let base: string;
/** The project `trellis dev` serves (and the reload test edits); `startProject` is its copy for `trellis start`. */
let devProject: Project;
let startProject: Project;
let appFile: string;
let schemaFile: string;
let original: { app: string; schema: string };

beforeAll(async () => {
  if (!built) return;
  base = join(root, ".app", "cli-test", `dev-loop-${randomBytes(4).toString("hex")}`);
  const dir = join(base, "dev-loop");
  await mkdir(base, { recursive: true });
  const made = await trellis(root, ["new", dir, "--no-install", "--surfaces", "live"]);
  expect(made.code, made.stderr).toBe(0);
  await mkdir(join(dir, "node_modules"));
  await symlink(root, join(dir, "node_modules", "trellis"), "dir");
  // A new data directory is unpacked from the PGlite template in node_modules/.cache, built once
  // per machine (kernel/embedded/template-cache.ts), as in a project whose tests have run, instead
  // of initdb in a child process first (test/embedded/data-dir.test.ts covers that path).
  await memoryTemplate();
  await symlink(join(root, "node_modules", ".cache"), join(dir, "node_modules", ".cache"), "dir");
  appFile = join(dir, "src/app.ts");
  schemaFile = join(dir, "src/schema.ts");
  original = { app: await readFile(appFile, "utf8"), schema: await readFile(schemaFile, "utf8") };
  // Copied before any edit or start: the same rendered project, with no data directory yet.
  await cp(dir, join(base, "start-loop"), { recursive: true, verbatimSymlinks: true });
  devProject = { dir, port: await freePort() };
  let port = await freePort();
  while (port === devProject.port) port = await freePort();
  startProject = { dir: join(base, "start-loop"), port };
}, 60_000);

afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

/** A server command (`dev` or `start`) in its own process group, its output collected; outside the test runner's variables, so it shows its banner and logs. */
function server({ dir, port }: Project, args: string[]): { child: ChildProcess; output: { text: string }; stop(): Promise<void> } {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|JEST_WORKER_ID$|NODE_TEST_CONTEXT$|DATABASE_URL$)/.test(key)));
  const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...inherited, NODE_ENV: "development", PORT: String(port), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const output = { text: "" };
  child.stdout!.on("data", (chunk) => (output.text += chunk));
  child.stderr!.on("data", (chunk) => (output.text += chunk));
  const stop = async () => {
    if (groupRunning(child.pid!)) process.kill(-child.pid!, "SIGTERM");
    await vi.waitFor(
      () => {
        if (groupRunning(child.pid!)) throw new Error(`trellis ${args[0]} still running after SIGTERM:\n${output.text}`);
      },
      { timeout: 30_000, interval: 50 },
    );
  };
  return { child, output, stop };
}

/** Whether a process is running (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const urlOf = ({ port }: Project) => (path: string) => `http://localhost:${port}${path}`;

/** Polls until `path` answers as `accept` says (a named condition, with the server's output on failure). */
async function until(project: Project, path: string, accept: (response: Response) => boolean | Promise<boolean>, output: { text: string }, init?: RequestInit): Promise<Response> {
  return vi.waitFor(
    async () => {
      const response = await fetch(urlOf(project)(path), init).catch(() => undefined);
      if (!response || !(await accept(response.clone()))) throw new Error(`${path} not answering as expected yet:\n${output.text.slice(-3000)}`);
      return response;
    },
    { timeout: 60_000, interval: 25 },
  );
}

const rpc = (name: string, cookie?: string): RequestInit => ({ method: "POST", headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) }, body: JSON.stringify({ json: {} }) });
const says = (value: string) => async (response: Response) => response.status === 200 && JSON.stringify(await response.json()) === JSON.stringify({ json: value });
const withProcedure = (value: string) => original.app.replace(".procedure(\n", `.procedure("hello", (base) => base.handler(() => "${value}"))\n    .procedure(\n`);

describe.skipIf(!built)("trellis dev and the CLI beside a running server", { concurrent: true }, () => {
  // The two `trellis dev` tests share their project and data directory: one after the other.
  describe("`trellis dev`", () => {
    it.sequential("dev reloads an edited procedure, a new schema version, and a broken edit once fixed, on one open database", { timeout: 180_000 }, async () => {
      const { dir } = devProject;
      const url = urlOf(devProject);
      const dev = server(devProject, ["dev"]);
      try {
        await writeFile(appFile, withProcedure("one"));
        await until(devProject, "/rpc/hello", says("one"), dev.output, rpc("hello"));
        // A live subscriber of the first app: its stream ends on reload, and the client subscribes again.
        const signUp = await fetch(url("/api/auth/sign-up/email"), { method: "POST", headers: { "content-type": "application/json", origin: url("") }, body: JSON.stringify({ email: "dev@example.com", password: "correct horse battery", name: "Dev" }) });
        expect(signUp.status, await signUp.clone().text()).toBe(200);
        const cookie = signUp.headers.getSetCookie().map((entry) => entry.split(";")[0]).join("; ");
        const live = await fetch(url("/rpc/note/live"), rpc("note.live", cookie));
        expect(live.headers.get("content-type")).toContain("text/event-stream");
        const reader = live.body!.getReader();
        await reader.read();

        // Edit the procedure: the new code answers; the banner is shown again.
        const timed = performance.now();
        await writeFile(appFile, withProcedure("two"));
        await until(devProject, "/rpc/hello", says("two"), dev.output, rpc("hello"));
        const reloadMs = performance.now() - timed;
        expect(dev.output.text).toContain("src/app.ts changed: reloading");
        expect(dev.output.text.match(/is listening on/g)?.length).toBeGreaterThanOrEqual(2);
        // The old app's stream ended; a new subscription is served by the new app, signed in as before.
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
        const again = await fetch(url("/rpc/note/live"), rpc("note.live", cookie));
        expect(again.status).toBe(200);
        await again.body!.cancel();
        console.log(`dev: edit to first 200 in ${Math.round(reloadMs)} ms`);

        // A new schema version is migrated on reload.
        await writeFile(schemaFile, `${original.schema}\nexport const v2 = schema("2").extend(v1).table("tag", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();\n`);
        await writeFile(appFile, withProcedure("three").replace('import { v1 } from "./schema.js";', 'import { v1, v2 } from "./schema.js";').replace(".schema(v1)", ".schema(v1)\n    .schema(v2)"));
        await until(devProject, "/rpc/hello", says("three"), dev.output, rpc("hello"));
        // The banner (one JSON line when the output is not a terminal) says what was migrated.
        expect(dev.output.text).toContain('"applied":["0002_2"]');
        const status = await trellis(dir, ["migrate", "status"]);
        expect(status.stdout).toMatch(/0002_2\s+applied/);

        // A broken edit shows its error and serves nothing; the next good edit serves again.
        await writeFile(appFile, withProcedure("four").replace(".schema(v1)", ".schema(v1)\n    .schema(v2)").replace('import { v1 } from "./schema.js";', 'import { v1, v2 } from "./schema.js";').replace("export default function", "export default functio"));
        await vi.waitFor(
          () => {
            if (!/waiting for a change to reload/.test(dev.output.text)) throw new Error(`no error shown yet:\n${dev.output.text.slice(-2000)}`);
          },
          { timeout: 60_000, interval: 25 },
        );
        expect(await fetch(url("/health")).catch(() => undefined)).toBeUndefined();
        await writeFile(appFile, withProcedure("five").replace(".schema(v1)", ".schema(v1)\n    .schema(v2)").replace('import { v1 } from "./schema.js";', 'import { v1, v2 } from "./schema.js";'));
        await until(devProject, "/rpc/hello", says("five"), dev.output, rpc("hello"));
        expect((await fetch(url("/health"))).status).toBe(200);
        // The user signed up before every reload is still there: one database throughout.
        const session = await fetch(url("/api/auth/get-session"), { headers: { cookie } });
        expect((await session.json()).user.email).toBe("dev@example.com");
      } finally {
        await dev.stop();
      }
      expect(existsSync(join(dir, ".data.lock"))).toBe(false);
      expect(existsSync(join(dir, ".data/db.control"))).toBe(false);
    });

    it.sequential("each command works through a running `trellis dev`, on a token only the owner can read", { timeout: 240_000 }, () => commandsBeside(devProject, "dev"));
  });

  it("each command works through a running `trellis start`, on a token only the owner can read", { timeout: 240_000 }, () => commandsBeside(startProject, "start"));
});

/** Every command beside a running `trellis <mode>` in `project`, then the same command with the server gone. */
async function commandsBeside(project: Project, mode: "dev" | "start"): Promise<void> {
  const { dir } = project;
  const url = urlOf(project);
  if (mode === "start") {
    // tsc over the project and the types it reaches (about 1,200 files), beside the `trellis dev`
    // tests: over a minute on a loaded machine.
    const compiled = await trellis(dir, ["build"], {}, undefined, 180_000);
    expect(compiled.code, compiled.stdout + compiled.stderr).toBe(0);
  }
  const running = server(project, [mode]);
  try {
    await until(project, "/health", (response) => response.status === 200, running.output);
    const record = join(dir, ".data/db.control");
    expect(existsSync(record), running.output.text).toBe(true);
    expect(statSync(record).mode & 0o777).toBe(0o600);
    const { url: control } = JSON.parse(await readFile(record, "utf8")) as { url: string };
    expect(new URL(control).hostname).toBe("127.0.0.1");
    expect((await fetch(`${control}/run`, { method: "POST", body: JSON.stringify({ command: "routes", args: {} }) })).status).toBe(401);

    const times: Record<string, number> = {};
    const run = async (args: string[], env: Record<string, string> = {}, input?: string) => {
      const outcome = await trellis(dir, args, env, input);
      times[args.slice(0, 2).join(" ")] = Math.round(outcome.ms);
      return outcome;
    };
    const routes = await run(["routes"]);
    expect(routes.code, routes.stderr).toBe(0);
    expect(routes.stdout).toMatch(/procedure\s+note\.list\s+owner\s+POST \/rpc\/note\/list/);
    const status = await run(["migrate", "status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/0001_1\s+applied/);
    const check = await run(["migrate", "check"]);
    expect(check.stdout).toContain("up to date");
    const email = `admin-${mode}@example.com`;
    const created = await run(["admin", "create", email]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`created ${email} with the admin role`);
    expect((await run(["admin", "create", email])).stdout).toContain("already holds the admin role");
    const doctor = await run(["doctor"]);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(doctor.stdout).toMatch(/ok\s+database/);
    expect(doctor.stdout).toMatch(/ok\s+app/);
    const file = join(dir, `backup-${mode}.tar.gz`);
    const backup = await run(["db", "backup", "--to", file]);
    expect(backup.code, backup.stderr).toBe(0);
    expect([...(await readFile(file)).subarray(0, 2)]).toEqual([0x1f, 0x8b]);

    // db shell: psql on a socket the server serves from the thread that holds the database.
    const piped = await run(["db", "shell"], {}, `select email from "user" where email = '${email}';\nselect 40 + 2 as answer\n`);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain(email);
    expect(piped.stdout).toMatch(/answer\s*\n-+\n\s*42\n\(1 row\)/);
    const failing = await trellis(dir, ["db", "shell", "--", "-v", "ON_ERROR_STOP=1"], {}, "select * from nope;\n");
    expect(failing.code).toBe(3);
    expect(failing.stderr).toContain('ERROR:  relation "nope" does not exist');
    // Without psql: the CLI's own prompt, each statement sent through the control channel.
    const prompt = await trellis(dir, ["db", "shell"], { PATH: "/nonexistent" }, "select 40 + 2 as answer;\nselect * from nope;\n\\dt\n\\d note\nselect 'last'\n");
    expect(prompt.code).toBe(1);
    expect(prompt.stdout).toMatch(/answer\n42\n\(1 row\)/);
    expect(prompt.stderr).toContain('ERROR:  relation "nope" does not exist (SQLSTATE 42P01)');
    expect(prompt.stdout).toMatch(/public\s+note\s+table/);
    expect(prompt.stdout).toMatch(/Column\s+Type\s+Nullable\s+Default\n[\s\S]*title\s+text/);
    expect(prompt.stdout).toMatch(/\?column\?\nlast\n\(1 row\)/);
    // The app still serves after both shells: the socket never held its statements.
    expect((await fetch(url("/health"))).status).toBe(200);
    console.log(`beside trellis ${mode}: ${JSON.stringify(times)} ms`);
  } finally {
    await running.stop();
  }
  // The record is gone, or (a server ended by a second signal before it could remove it) names a
  // process that is gone, which the CLI ignores: the commands below then open the database alone.
  const left = join(dir, ".data/db.control");
  if (existsSync(left)) expect(alive((JSON.parse(await readFile(left, "utf8")) as { pid: number }).pid), `a live server still recorded:\n${running.output.text.slice(-2000)}`).toBe(false);
  // Without a server, the same commands open the database themselves, as before.
  const alone = await trellis(dir, ["migrate", "status"]);
  expect(alone.code, alone.stderr).toBe(0);
  expect(alone.stdout).toMatch(/0001_1\s+applied/);
}
