import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../support/browser.js";
import { freshBuild } from "../support/built-package.js";
import { once } from "../support/once.js";
import { exitOf, groupRunning } from "../support/children.js";

/**
 * Each subcommand through its own process, as a user runs it: exit code and output. The project
 * is what `trellis new` writes, rendered inside the repository. With a fresh build in dist/ (CI
 * always has one), the command is dist/bin.js and the project's `trellis` is this repository
 * linked into its node_modules, as an installed package; without one, the command runs the source
 * through tsx and `trellis/*` resolves to the source through a tsconfig that maps it. (The packed
 * and published flow is test/package/published.test.ts.)
 *
 * Each process loads Trellis and the app (a few seconds of CPU), so the file pays for processes,
 * not for projects: one rendered project is shared by every test that can share it, and the
 * describe blocks run side by side, each on its own project and data directory. A block's tests run
 * in order (`it.sequential`): they share its project, its database and the files they edit.
 */
const root = resolve(import.meta.dirname, "../..");
const tsx = join(root, "node_modules/tsx/dist/cli.mjs");
const built = freshBuild();
/** Node's arguments that start `trellis`: the bundle each process loads whole, or the source compiled by tsx. */
const command = built ? [join(root, "dist/bin.js")] : [tsx, join(root, "presets/cli/index.ts")];
if (!built) console.log("the CLI tests run the source through tsx: dist/ is missing or older than the source (npm run build)");

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function trellis(cwd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<Outcome> {
  return new Promise((done) => {
    execFile(process.execPath, [...command, ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      // A command stopped by the timeout says so, rather than passing for an exit code 1 with nothing printed.
      const killed = (error as { killed?: boolean } | null)?.killed ? `\n[the command did not finish within 120 s and was stopped]` : "";
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr: stderr + killed });
    });
  });
}

/**
 * The embedded database's template cache (node_modules/.cache/trellis) of every project this file
 * renders, as one project's commands and tests share theirs: the first database opened runs initdb
 * (in a child process) and keeps the cluster there, and every later one, a `memory://` database of
 * the saas project's own tests included, starts from it.
 */
const cache = join(root, ".app", "cli-test", `cache-${randomBytes(4).toString("hex")}`);

/** A rendered project whose `trellis/*` imports resolve to this repository's source. */
async function project(name: string, args: string[] = []): Promise<string> {
  const dir = join(root, ".app", "cli-test", `${name}-${randomBytes(4).toString("hex")}`);
  made.push(dir);
  await mkdir(join(dir, ".."), { recursive: true });
  const rendered = await trellis(root, ["new", dir, "--no-install", ...args]);
  expect(rendered.code, rendered.stderr).toBe(0);
  await mkdir(join(dir, "node_modules"));
  await mkdir(cache, { recursive: true });
  await symlink(cache, join(dir, "node_modules", ".cache"), "dir");
  if (built) {
    await symlink(root, join(dir, "node_modules", "trellis"), "dir");
    return dir;
  }
  const paths = JSON.parse((await readFile(join(root, "tsconfig.json"), "utf8")).replace(/^\s*\/\/.*$/gm, "")).compilerOptions.paths as Record<string, string[]>;
  const config = JSON.parse(await readFile(join(dir, "tsconfig.json"), "utf8"));
  config.compilerOptions.baseUrl = root;
  config.compilerOptions.paths = paths;
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  return dir;
}

const made: string[] = [cache];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The default project (`trellis new <dir>`), shared by the embedded commands and the checks of `new` itself. */
const shared = once(() => project("app"));

/**
 * The file's first command to open a database: `migrate status` on the shared project, whose initdb
 * fills the template cache. The blocks that open databases of their own wait for it rather than
 * each running initdb beside it; the migrate test asserts on its output.
 */
const firstDatabase = once(async () => trellis(await shared(), ["migrate", "status"], { DATABASE_URL: undefined }));

describe.concurrent("trellis new", () => {
  // When the published-package test runs (test/package/published.test.ts, under CI), it installs the
  // all-surfaces project from its registry and type-checks that one and the plain one for real:
  // here, then, only the sign-in methods and the saas template are rendered and type-checked.
  const packed = Boolean(process.env.CI || process.env.TRELLIS_PACK_TEST || process.env.TRELLIS_REGISTRY_TEST);
  it("renders a project that type-checks strict, with no surface, with every surface, with every sign-in method, and the saas template with all of them", { timeout: 480_000 }, async () => {
    const dirs: string[] = [];
    const saasEverything = ["--template", "saas", "--surfaces", "openapi,mcp,files,live,admin", "--auth", "github,google,passkeys,2fa"];
    const variants = [[], ["--surfaces", "openapi,mcp,files,live,admin"], ["--auth", "github,google,passkeys,2fa"], saasEverything];
    for (const args of packed ? variants.slice(2) : variants) {
      const dir = await project("typed", args);
      dirs.push(dir);
      const env = await readFile(join(dir, ".env"), "utf8");
      expect(env).toMatch(/^AUTH_SECRET=[A-Za-z0-9+/=]{44}$/m);
      expect(await readFile(join(dir, ".env.example"), "utf8")).toMatch(/^AUTH_SECRET=$/m);
      expect(await readFile(join(dir, ".gitignore"), "utf8")).toContain(".env");
      const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
      expect(manifest.scripts).toMatchObject({ dev: "trellis dev", build: "trellis build", start: "trellis start", test: "vitest run", typecheck: "tsc --noEmit" });
      const app = await readFile(join(dir, "src/app.ts"), "utf8");
      expect(app).not.toMatch(/surface:|auth:|template:/);
      if (args[0] === "--template") {
        expect(app).toContain('tenant: "orgId"');
        expect(await readFile(join(dir, ".env.example"), "utf8")).toMatch(/^# SMTP_URL=/m);
        expect(app).toMatch(/\.admin\(.*\.procedure\(/s);
        expect(await readFile(join(dir, "src/schema.ts"), "utf8")).toMatch(/\.auth\(\{\s+organizations: true,\s+twoFactor: true,\s+passkeys: true,\s+\}\)/);
        continue;
      }
      if (args[0] === "--surfaces") expect(Object.keys(manifest.dependencies)).toEqual(expect.arrayContaining(["@orpc/openapi", "@modelcontextprotocol/sdk", "swagger-ui-dist"]));
      else expect(app).not.toMatch(/openapi|mcp|files/);
      if (args[0] === "--auth") {
        expect(manifest.dependencies["@better-auth/passkey"]).toBeDefined();
        expect(app).toContain("github: { clientId: GITHUB_CLIENT_ID");
        expect(app).toContain("google: { clientId: GOOGLE_CLIENT_ID");
        expect(await readFile(join(dir, "src/schema.ts"), "utf8")).toMatch(/\.auth\(\{\s+twoFactor: true,\s+passkeys: true,\s+\}\)/);
        const example = await readFile(join(dir, ".env.example"), "utf8");
        for (const key of ["GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET"]) expect(example).toMatch(new RegExp(`^${key}=$`, "m"));
        expect(example).toContain("/api/auth/callback/github");
        expect(example).not.toContain("auth:");
      } else expect(app).not.toMatch(/socialProviders|GITHUB/);
    }
    // Every project in one compiler run (the cost is Trellis's own source, checked once).
    const config = JSON.parse(await readFile(join(dirs[0]!, "tsconfig.json"), "utf8"));
    config.include = dirs.flatMap((dir) => [join(dir, "src"), join(dir, "test")]);
    const combined = join(dirs[0]!, "..", `tsconfig.${randomBytes(4).toString("hex")}.json`);
    await writeFile(combined, JSON.stringify(config));
    made.push(combined);
    const tsc = await new Promise<Outcome>((done) =>
      execFile(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", combined], { cwd: root }, (error, stdout, stderr) => done({ code: error ? 1 : 0, stdout, stderr })),
    );
    expect(tsc.code, tsc.stdout).toBe(0);
  });

  it("--template saas renders the team-tasks app, whose own tests pass", { timeout: 480_000 }, async () => {
    const dir = await project("saas", ["--template", "saas", "--surfaces", "admin,live"]);
    const read = (file: string) => readFile(join(dir, file), "utf8");
    expect(await read("src/app.ts")).toContain('.resource("task", {\n      tenant: "orgId"');
    expect(await read("README.md")).toContain("/api/auth/organization/invite-member");
    expect(await read(".env.example")).toContain("# INVITE_URL=http://localhost:3000/invite/{id}");
    expect(await read(".env.example")).not.toContain("template:");
    // The notes app's files are replaced, not kept beside the team's.
    expect(await read("test/app.test.ts")).not.toContain("note");
    // Its `npm test`: the repository's vitest on the project's own config and tests, with `trellis/*`
    // resolved as the project resolves it (the linked build, or the source without a fresh one).
    const config = built ? join(dir, "vitest.config.ts") : join(dir, "vitest.source.config.ts");
    if (!built) {
      const paths = JSON.parse((await readFile(join(root, "tsconfig.json"), "utf8")).replace(/^\s*\/\/.*$/gm, "")).compilerOptions.paths as Record<string, string[]>;
      const alias = Object.entries(paths)
        .sort(([a], [b]) => b.length - a.length)
        .map(([find, [target]]) => ({ find: new RegExp(`^${find.replace("/", "\\/")}$`).source, replacement: join(root, target!) }));
      await writeFile(
        config,
        `import base from "./vitest.config.ts";\nexport default { ...base, resolve: { alias: ${JSON.stringify(alias)}.map(({ find, replacement }) => ({ find: new RegExp(find), replacement })) } };\n`,
      );
    }
    // The project's first test migrates its database template (seconds when idle); on a loaded machine
    // that outlasts the project's own 60 s test timeout, so this run allows more. Its `memory://`
    // databases start from the cluster the file's first database left in the shared cache.
    await firstDatabase();
    const tested = await new Promise<Outcome>((done) =>
      execFile(process.execPath, [join(root, "node_modules/vitest/vitest.mjs"), "run", "--config", config, "--root", dir, "--testTimeout", "180000"], { cwd: dir, env: { ...process.env, NO_COLOR: "1", DATABASE_URL: "" }, timeout: 450_000 }, (error, stdout, stderr) =>
        done({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(tested.code, `${tested.stdout}\n${tested.stderr}`).toBe(0);
    expect(tested.stdout).toMatch(/2 passed/);
  });

  it("renders what a first app needs: files on disk, ignored data and backups, the surfaces documented, install scripts declared", { timeout: 60_000 }, async () => {
    const dir = await project("rendered", ["--surfaces", "openapi,mcp,files,live,admin"]);
    const read = (file: string) => readFile(join(dir, file), "utf8");
    // Uploaded files live on disk under the data directory, not in memory; tests pass their own store.
    const app = await read("src/app.ts");
    expect(app).not.toContain("memoryStorage");
    expect(app).toContain('fromStore(createStorage({ driver: fsDriver({ base: join(dataDir, "files") }) }))');
    expect(app).toContain('embedded({ dataDir: join(dataDir, "db") })');
    const manifest = JSON.parse(await read("package.json"));
    expect(manifest.dependencies.unstorage).toMatch(/^\^1\./);
    // npm 11 warns on every install about install scripts package.json does not cover.
    expect(manifest.allowScripts).toEqual({ esbuild: true, "@scarf/scarf": false });
    const ignored = (await read(".gitignore")).split("\n");
    expect(ignored).toEqual(expect.arrayContaining([".data/", ".data.lock", "backup-*.tar.gz", "backup-*.dump", ".app/", ".env", "node_modules/"]));
    for (const file of ["README.md", ".env.example"]) {
      const text = await read(file);
      for (const needed of ["/_admin", "/docs", "/mcp", "ADMIN_EMAIL", "admin create", "APP_BASE_URL"]) expect(text, `${file}: ${needed}`).toContain(needed);
      expect(text).not.toContain("npmjs.com");
    }
    const readme = await read("README.md");
    for (const needed of ["db backup", ".data/backups/"]) expect(readme, needed).toContain(needed);
    // From a tarball Trellis comes built: npm would list the prepare it never runs there.
    const plain = await project("rendered-plain", ["--trellis", "file:/tmp/trellis-0.1.0.tgz"]);
    expect(JSON.parse(await readFile(join(plain, "package.json"), "utf8")).allowScripts).toEqual({ esbuild: true, "file:/tmp/trellis-0.1.0.tgz": false });
    expect(await readFile(join(plain, "src/app.ts"), "utf8")).not.toMatch(/unstorage|storage/);
  });

  it("refuses a folder that is not empty, and unknown surfaces and templates, with exit codes", { timeout: 120_000 }, async () => {
    // The project the embedded commands run on: a refused `new` writes nothing.
    const dir = await shared();
    // .env holds AUTH_SECRET: readable by the owner only.
    expect(((await stat(join(dir, ".env"))).mode & 0o777).toString(8)).toBe("600");
    const again = await trellis(root, ["new", dir, "--no-install"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("CLI_DIR_NOT_EMPTY");
    const bogus = await trellis(root, ["new", join(dir, "nested"), "--surfaces", "bogus"]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('Unknown surface "bogus"');
    const template = await trellis(root, ["new", join(dir, "nested"), "--template", "crm"]);
    expect(template.code).toBe(2);
    expect(template.stderr).toContain('Unknown template "crm"');
    const plugin = await trellis(root, ["new", join(dir, "nested"), "--plugin", "--template", "saas"]);
    expect(plugin.code).toBe(2);
    expect(plugin.stderr).toContain("--template applies to apps");
    const unknown = await trellis(root, ["nope"]);
    expect(unknown.code).toBe(2);
    expect((await trellis(root, ["migrate", "--help"])).stdout).toContain("check");
  });
});

type Env = () => Record<string, string | undefined>;
const embeddedEnv: Env = () => ({ DATABASE_URL: undefined });

/** `migrate status` (its outcome given), then `check`, `up` and `check` again; PostgreSQL runs only what differs by database. */
async function migrateSteps(dir: string, env: Env, status: Outcome, everything: boolean): Promise<void> {
  expect(status.code, status.stderr).toBe(0);
  expect(status.stdout).toMatch(/0001_1\s+pending/);
  if (everything) {
    const pending = await trellis(dir, ["migrate", "check"], env());
    expect(pending.code).toBe(2);
    expect(pending.stdout).toContain("1 version(s) pending");
  }
  const up = await trellis(dir, ["migrate", "up"], env());
  expect(up.code, up.stderr).toBe(0);
  expect(up.stdout).toMatch(/applied\s+0001_1/);
  const clean = await trellis(dir, ["migrate", "check"], env());
  expect(clean.code, clean.stdout + clean.stderr).toBe(0);
  expect(clean.stdout).toContain("up to date");
}

/** `admin create` on a migrated database; on PostgreSQL only the first. */
async function adminSteps(dir: string, env: Env, everything: boolean): Promise<void> {
  const created = await trellis(dir, ["admin", "create", "Root@Example.com"], env());
  expect(created.code, created.stderr).toBe(0);
  expect(created.stdout).toContain("created root@example.com with the admin role");
  expect(created.stdout).toMatch(/password: \S{16}/);
  if (!everything) return;
  const again = await trellis(dir, ["admin", "create", "root@example.com"], env());
  expect(again.stdout).toContain("already holds the admin role");
  const bad = await trellis(dir, ["admin", "create", "not-an-email"], env());
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("CLI_BAD_EMAIL");
  // The app's log lines (here one its build writes; the outbox's mail line in a real project) go
  // to stderr: stdout is the command's own lines and the password. Outside a test runner, whose
  // variables turn the app's logger off, as a user runs it.
  const appFile = join(dir, "src/app.ts");
  const original = await readFile(appFile, "utf8");
  await writeFile(appFile, original.replace(".schema(v1)\n", '.schema(v1)\n    .use({ name: "chatty", build: (ctx: any) => ctx.logger?.info({ chatty: true }, "a line from the app") })\n'));
  try {
    const outside = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|JEST_WORKER_ID$|NODE_TEST_CONTEXT$|NODE_ENV$)/.test(key)));
    const logged = await new Promise<Outcome>((done) =>
      execFile(process.execPath, [...command, "admin", "create", "logs@example.com"], { cwd: dir, env: { ...outside, ...env(), NO_COLOR: "1" }, timeout: 120_000 }, (error, stdout, stderr) =>
        done({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(logged.code, logged.stderr).toBe(0);
    expect(logged.stderr).toContain("a line from the app");
    expect(logged.stdout.trim().split("\n")).toEqual(["created logs@example.com with the admin role", expect.stringMatching(/^password: \S{16}  \(shown once/)]);
  } finally {
    await writeFile(appFile, original);
  }
}

/** The shared project's embedded database, in order: migrated by the first test, then listed, backed up and restored. */
describe.concurrent("trellis commands on embedded", () => {
  const env = embeddedEnv;
  let dir: string;
  beforeAll(async () => {
    dir = await shared();
  }, 120_000);

  it.sequential("migrate status, check and up report and apply with exit codes a deploy script can use", { timeout: 240_000 }, async () => {
    // The file's first database: its initdb runs here, in a child process of the command, and the
    // new cluster is kept in the project's template cache for the next database to start from.
    await migrateSteps(dir, env, await firstDatabase(), true);
    expect(await readdir(join(cache, "trellis"))).toContainEqual(expect.stringMatching(/^pglite-.+\.tar$/));
  });

  it.sequential("routes lists every procedure with its permission", { timeout: 120_000 }, async () => {
    const routes = await trellis(dir, ["routes"], env());
    expect(routes.code, routes.stderr).toBe(0);
    expect(routes.stdout).toMatch(/procedure\s+note\.list\s+owner\s+POST \/rpc\/note\/list/);
    expect(routes.stdout).toMatch(/procedure\s+note\.create\s+authenticated/);
    expect(routes.stdout).toMatch(/procedure\s+note\.count\s+authenticated/);
    // page and batch answer to the list's and the writes' rules (they read "public" here once).
    expect(routes.stdout).toMatch(/procedure\s+note\.page\s+owner/);
    expect(routes.stdout).toMatch(/procedure\s+note\.batch\s+authenticated/);
    expect(routes.stdout).toMatch(/route\s+GET \/health/);
  });

  it.sequential("db backup writes a tarball; db restore refuses a non-empty data directory and fills an empty one", { timeout: 240_000 }, async () => {
    // Migrated by the first test of this block.
    const file = join(dir, "backup.tar.gz");
    const backup = await trellis(dir, ["db", "backup", "--to", file], env());
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`backed up the embedded database`);
    expect([...(await readFile(file)).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(((await stat(file)).mode & 0o777).toString(8)).toBe("600");
    // Without --to, under the data directory (ignored by git), never in the project's root.
    const kept = await trellis(dir, ["db", "backup"], env());
    expect(kept.code, kept.stderr).toBe(0);
    const [name] = await readdir(join(dir, ".data/backups"));
    expect(name).toMatch(/^backup-.+\.tar\.gz$/);
    expect(kept.stdout).toContain(join(dir, ".data/backups", name!));
    expect((await readdir(dir)).filter((entry) => entry.startsWith("backup-"))).toEqual([]);
    const refused = await trellis(dir, ["db", "restore", file], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("DB_RESTORE_NOT_EMPTY");
    // Not a backup, forced: the coded error alone, exit 1 (it was followed by an uncaught zlib stack).
    const junk = join(dir, "junk.tar.gz");
    await writeFile(junk, randomBytes(4096));
    const unreadable = await trellis(dir, ["db", "restore", junk, "--force"], env());
    expect(unreadable.code, unreadable.stderr).toBe(1);
    expect(unreadable.stderr).toContain("DB_RESTORE_UNREADABLE");
    expect(unreadable.stderr).not.toMatch(/^\s+at /m);
    expect(unreadable.stderr).not.toContain("incorrect header check");
    const restored = await trellis(dir, ["db", "restore", file], { ...env(), DATA_DIR: join(dir, ".restored") });
    expect(restored.code, restored.stderr).toBe(0);
    const check = await trellis(dir, ["migrate", "check"], { ...env(), DATA_DIR: join(dir, ".restored") });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain("up to date");
  });
});

/**
 * A second project on the embedded database, beside the first block: the commands that serve it or
 * edit its source. `trellis dev` migrates it (the app's start), which the later tests find.
 */
describe.concurrent("trellis dev, admin create and db shell on embedded", () => {
  const env = embeddedEnv;
  let dir: string;
  beforeAll(async () => {
    dir = await project("served");
  }, 120_000);

  it.sequential("src/server.ts without AUTH_SECRET prints the start-up block, exit 1, no stack", { timeout: 90_000 }, async () => {
    // As `node dist/server.js` runs it with no .env loaded: the app's own check is a coded error serve() shows.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|JEST_WORKER_ID$|NODE_TEST_CONTEXT$|DEBUG$|AUTH_SECRET$)/.test(key)));
    const child = spawn(process.execPath, ["--import", pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href, "src/server.ts"], { cwd: dir, env: { ...inherited, ...env(), NODE_ENV: "development", PORT: "0", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const { code } = await exitOf(child, 60_000, "src/server.ts without AUTH_SECRET").catch((error: Error) => {
      child.kill("SIGKILL");
      throw new Error(`${error.message}\n${stderr}`);
    });
    expect(code, stderr).toBe(1);
    expect(stderr).toContain("Trellis could not start: AUTH_SECRET_MISSING");
    expect(stderr).toContain("AUTH_SECRET is not set: copy .env.example to .env");
    expect(stderr).toContain("fix: set AUTH_SECRET to at least 32 random characters");
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it.sequential("dev serves the app and reloads it when a source file changes", { timeout: 180_000 }, async () => {
    // The block's first database: it starts from the template the file's first database left in the shared cache.
    await firstDatabase();
    // A port nothing listens on now (a random one could be another file's server, whose /health answers).
    const port = String(await freePort());
    const server = spawn(process.execPath, [...command, "dev"], { cwd: dir, env: { ...process.env, ...env(), PORT: port, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    server.stdout.on("data", (chunk) => (output += chunk));
    server.stderr.on("data", (chunk) => (output += chunk));
    const appFile = join(dir, "src/app.ts");
    const original = await readFile(appFile, "utf8");
    const until = async (path: string, status: number) => {
      for (let attempt = 0; attempt < 400; attempt++) {
        const response = await fetch(`http://localhost:${port}${path}`).catch(() => undefined);
        if (response?.status === status) return response;
        await new Promise((wait) => setTimeout(wait, 250));
      }
      throw new Error(`GET ${path} never answered ${status}:\n${output}`);
    };
    try {
      await until("/health", 200);
      // The running app holds the data directory: db shell runs psql through it (test/cli/dev-loop.test.ts has the rest).
      const shell = await trellis(dir, ["db", "shell", "--", "-A", "-t", "-c", "select 40 + 2"], env());
      expect(shell.code, shell.stderr).toBe(0);
      expect(shell.stdout.trim()).toBe("42");
      expect((await fetch(`http://localhost:${port}/ping`)).status).toBe(404);
      await writeFile(appFile, original.replace(".procedure(\n", '.route("GET", "/ping", () => ({ pong: true }))\n    .procedure(\n'));
      const ping = await until("/ping", 200);
      expect(await ping.json()).toEqual({ pong: true });
    } finally {
      process.kill(-server.pid!, "SIGTERM");
      await writeFile(appFile, original);
      // The next tests open the data directory: every process of the group (the command, the
      // watcher, the app holding the lock) has ended first.
      await vi.waitFor(
        () => {
          if (groupRunning(server.pid!)) throw new Error(`trellis dev (process group ${server.pid}) still running 30 s after SIGTERM:\n${output}`);
        },
        { timeout: 30_000, interval: 100 },
      );
    }
  });

  it.sequential("admin create makes a new admin, then promotes without duplicating", { timeout: 120_000 }, async () => {
    await adminSteps(dir, env, true);
  });

  it.sequential("migrate check exits 3 when an applied version was edited", { timeout: 120_000 }, async () => {
    const schemaFile = join(dir, "src/schema.ts");
    const original = await readFile(schemaFile, "utf8");
    await writeFile(schemaFile, original.replace('body: t.text().default(""),', 'body: t.text().default(""),\n    pinned: t.boolean().default(false),'));
    try {
      const drift = await trellis(dir, ["migrate", "check"], env());
      expect(drift.code).toBe(3);
      expect(drift.stdout).toContain("MIGRATION_DRIFT");
      expect(drift.stdout).toContain("pinned");
    } finally {
      await writeFile(schemaFile, original);
    }
  });

  it.sequential("db shell runs psql on the embedded database, with psql's arguments after --", { timeout: 120_000 }, async () => {
    // Migrated by `trellis dev`: the schema's table is there, and the lock is free again after.
    const shell = await trellis(dir, ["db", "shell", "--", "-c", "\\dt note"], env());
    expect(shell.code, shell.stderr).toBe(0);
    expect(shell.stdout).toMatch(/public\s+\|\s+note\s+\|\s+table/);
    expect(existsSync(join(dir, ".data/db.lock"))).toBe(false);
  });

  it.sequential("db shell without psql serves the embedded database at a printed URL until Ctrl-C", { timeout: 120_000 }, async () => {
    const shell = spawn(process.execPath, [...command, "db", "shell"], { cwd: dir, env: { ...process.env, ...env(), PATH: "/nonexistent", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const exited = new Promise<number | null>((done) => shell.once("exit", (code) => done(code)));
    const url = await new Promise<string>((found, failed) => {
      shell.stdout.on("data", (chunk) => {
        output += chunk;
        const match = /served at (postgresql:\/\/\S+) until Ctrl-C/.exec(output);
        if (match) found(match[1]!);
      });
      shell.stderr.on("data", (chunk) => (output += chunk));
      void exited.then(() => failed(new Error(`db shell exited:\n${output}`)));
    });
    try {
      expect(output).toContain("psql is not installed");
      const pg = await import("pg");
      const client = new pg.default.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query("select count(*)::int as n from note");
      await client.end();
      expect(rows).toEqual([{ n: expect.any(Number) }]);
      expect(existsSync(join(dir, ".data/db.lock"))).toBe(true);
    } finally {
      shell.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(existsSync(join(dir, ".data/db.lock"))).toBe(false);
  });
});

/** A project of its own: doctor's cases edit trellis.config.ts and .env, which every command reads. */
describe.concurrent("trellis doctor on embedded", () => {
  const env = embeddedEnv;
  let dir: string;
  beforeAll(async () => {
    dir = await project("doctor");
  }, 120_000);

  it.sequential("doctor passes on a healthy project and fails without a secret", { timeout: 180_000 }, async () => {
    // Its database starts from the template the file's first database left in the shared cache.
    await firstDatabase();
    const healthy = await trellis(dir, ["doctor"], env());
    expect(healthy.code, healthy.stdout + healthy.stderr).toBe(0);
    expect(healthy.stdout).toMatch(/ok\s+database/);
    expect(healthy.stdout).toMatch(/ok\s+secret/);
    // An app keeping files in memory, served on another port than its baseUrl's: both warned, neither fails.
    const config = join(dir, "trellis.config.ts");
    await writeFile(
      config,
      [
        'import { App } from "trellis";',
        'import { embedded } from "trellis/embedded";',
        'import { memoryStorage } from "trellis/storage";',
        'export default () => new App({ name: "Memory", baseUrl: "http://localhost:3000", db: embedded({ dataDir: "memory://" }), storage: memoryStorage() });',
      ].join("\n"),
    );
    try {
      const warned = await trellis(dir, ["doctor"], { ...env(), PORT: "4100" });
      expect(warned.code, warned.stdout + warned.stderr).toBe(0);
      expect(warned.stdout).toMatch(/warn\s+storage\s+the storage is memoryStorage\(\): stored files are lost at every restart/);
      expect(warned.stdout).toMatch(/warn\s+baseUrl\s+http:\/\/localhost:3000, but PORT=4100 serves http:\/\/localhost:4100: .*set APP_BASE_URL=http:\/\/localhost:4100/);
    } finally {
      await rm(config);
    }
    await writeFile(join(dir, ".env"), "");
    try {
      const production = await trellis(dir, ["doctor"], { ...env(), AUTH_SECRET: "short", NODE_ENV: "production" });
      expect(production.code).toBe(1);
      expect(production.stdout).toMatch(/fail\s+secret/);
      const local = await trellis(dir, ["doctor"], { ...env(), AUTH_SECRET: randomBytes(32).toString("base64"), NODE_ENV: "production" });
      expect(local.stdout).toMatch(/warn\s+baseUrl\s+http:\/\/localhost:3000 in production/);
    } finally {
      await writeFile(join(dir, ".env"), `AUTH_SECRET=${randomBytes(32).toString("base64")}\n`);
    }
  });
});

const pgUrl = process.env.DATABASE_URL;
if (!pgUrl) console.log("skipping the CLI's PostgreSQL runs: DATABASE_URL is not set");

/** A project of its own (the embedded blocks edit theirs meanwhile), on a schema of its own. */
describe.concurrent("trellis commands on PostgreSQL", { skip: !pgUrl }, () => {
  let dir: string;
  let pgSchema: string | undefined;
  const env: Env = () => ({ DATABASE_URL: `${pgUrl}?options=${encodeURIComponent(`-c search_path=${pgSchema}`)}` });
  beforeAll(async () => {
    dir = await project("pg");
    const pg = await import("pg");
    pgSchema = `cli_${randomBytes(6).toString("hex")}`;
    const client = new pg.default.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`create schema ${pgSchema}`);
    await client.end();
  }, 120_000);
  afterAll(async () => {
    if (!pgSchema) return;
    const pg = await import("pg");
    const client = new pg.default.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`drop schema if exists ${pgSchema} cascade`);
    await client.end();
  });

  it.sequential("migrate status, check and up report and apply with exit codes a deploy script can use", { timeout: 240_000 }, async () => {
    await migrateSteps(dir, env, await trellis(dir, ["migrate", "status"], env()), false);
  });

  it.sequential("admin create makes a new admin, then promotes without duplicating", { timeout: 120_000 }, async () => {
    await adminSteps(dir, env, false);
  });
});

describe.concurrent("the repository's own blog through trellis.config.ts", () => {
  it("doctor and db backup load the blog from the repository's root", { timeout: 180_000 }, async () => {
    // The blog's embedded database in a directory of this test's own (DATA_DIR, as npm start reads it).
    const home = join(root, ".app", "cli-test", `blog-${randomBytes(4).toString("hex")}`);
    made.push(home);
    const env = { DATABASE_URL: undefined, DATA_DIR: join(home, "embedded"), AUTH_SECRET: randomBytes(32).toString("base64") };
    const doctor = await trellis(root, ["doctor"], env);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(doctor.stdout).toMatch(/ok\s+app\s+Trellis Blog: /);
    expect(doctor.stdout).toContain(`embedded PostgreSQL (PGlite) reachable (${join(home, "embedded")})`);
    const backup = await trellis(root, ["db", "backup"], env);
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    // Beside the data directory, where the blog's backups plugin keeps its own (.app/backups by default).
    const [name] = await readdir(join(home, "backups"));
    expect(name).toMatch(/^backup-.+\.tar\.gz$/);
  });
});
