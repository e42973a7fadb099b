import { execFile, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "../docs/markdown.js";
import { freshBuild } from "../support/built-package.js";
import { npm, startAndProbe } from "./projects.js";
import { checkTarball, type TarballReport } from "./tarball.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const enabled = Boolean(process.env.CI || process.env.TRELLIS_PACK_TEST);
if (!enabled) console.log("skipping the packed-install test: it builds, packs and installs from the registry (set CI or TRELLIS_PACK_TEST=1)");

/**
 * What a new project writes: the README's sample, as "Start your own project" says, listening on a
 * free port and printing where. The packed trellis is its only dependency.
 */
const readmeSample = codeBlocks(root, "README.md").find((block) => block.lang === "ts")!.code;
const APP = readmeSample.replace("await serve(app, { port: 3000 });", "const server = await serve(app, { port: 0 });\nconsole.log(server.url);");

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    outDir: "out",
    skipLibCheck: true,
    // Node's types from this repository: the project installs trellis and nothing else.
    typeRoots: [join(root, "node_modules/@types")],
    types: ["node"],
  },
  files: ["app.ts"],
};

/** Memoised: the first caller starts the work, every caller awaits the same promise. */
function once<T>(work: () => Promise<T>): () => Promise<T> {
  let started: Promise<T> | undefined;
  return () => (started ??= work());
}

let dir: string | undefined;
const SURFACES = "openapi,mcp,files,live,admin";

/** One `npm pack` for the whole file: the ecosystem's checks read it, every project installs it. */
const packed = once(async () => {
  dir = await mkdtemp(join(tmpdir(), "trellis-pack-"));
  // `npm pack` runs `prepare`, which builds dist, unless dist/ already holds a build of the current
  // source (CI's `npm install` has just run the same build): then it packs that build.
  const scripts = freshBuild() ? ["--ignore-scripts"] : [];
  const started = performance.now();
  const result = await run("npm", ["pack", "--json", ...scripts, "--pack-destination", dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  // The build's own output comes first on stdout; the JSON report is the last thing printed.
  const report = result.stdout.slice(result.stdout.lastIndexOf("\n[") + 1);
  const [file] = JSON.parse(report) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  console.log(`npm pack: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { dir, tarball: join(dir, file!.filename), size: file!.size, unpackedSize: file!.unpackedSize, files: file!.files.map((entry) => entry.path) };
});

/**
 * One `npm install` for the whole file. `trellis new` writes two projects: a plain one and one with
 * every surface, whose dependencies are the plain one's plus the surfaces' optional peers. The
 * second is installed; the plain project and the README sample use its node_modules (a superset
 * changes nothing a plain project does), so the file pays for one install, not three.
 */
const installed = once(async () => {
  const { dir, tarball } = await packed();
  const started = performance.now();
  // The CLI as the tarball ships it (dist/bin.js is what was packed), run as `npm exec
  // --package=<tarball> -- trellis new` runs it: npm names the package in npm_config_package, from
  // which the new project depends on the same tarball.
  const cli = (args: string[]) => run(process.execPath, [join(root, "dist/bin.js"), "new", ...args, "--no-install"], { cwd: dir, env: { ...process.env, npm_config_package: tarball } });
  await cli(["my-app"]);
  await cli(["all-surfaces", "--surfaces", SURFACES]);
  const full = join(dir, "all-surfaces");
  await npm(full, ["install", "--no-audit", "--no-fund", "--prefer-offline"]);
  for (const project of ["my-app", "readme"]) {
    await mkdir(join(dir, project), { recursive: true });
    await symlink(join(full, "node_modules"), join(dir, project, "node_modules"), "dir");
  }
  console.log(`trellis new twice and one npm install: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { dir, tarball, full, plain: join(dir, "my-app"), readme: join(dir, "readme") };
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

// The tests share the tarball and the install, and are otherwise independent: they run at once, as
// much of their time is npm waiting on the registry and the disk. The ecosystem's checks need only
// the tarball, so they run while npm installs.
describe.skipIf(!enabled)("the package: packed, checked, installed into new projects, locked", { concurrent: true }, () => {
  let report: Promise<TarballReport>;
  beforeAll(() => {
    report = packed().then(({ tarball, size, unpackedSize, files }) => checkTarball({ root, tarball, size, unpackedSize, files }));
    // Reported by the tests below; a rejection here is not left unhandled meanwhile.
    report.catch(() => {});
  });

  it("passes publint with warnings as errors", { timeout: 240_000 }, async () => {
    const { publint } = await report;
    expect(publint.code, publint.output).toBe(0);
    expect(publint.output).toMatch(/All good!/);
  });

  it("passes attw for every export, as an ESM-only package", { timeout: 240_000 }, async () => {
    const { attw, exports } = await report;
    expect(attw.entrypoints.sort()).toEqual(exports.sort());
    // The ESM-only profile ignores exactly two resolutions: `require()` from CommonJS (it gets ESM,
    // through dynamic import only) and node10 (no `exports` map). Any other problem is a failure.
    expect(attw.problems.filter((problem) => !(problem.resolutionKind === "node10" || problem.resolutionKind === "node16-cjs"))).toEqual([]);
    expect(attw.code, attw.output).toBe(0);
  });

  it("ships only what runs, inside its size budget, and declares what has side effects", { timeout: 240_000 }, async () => {
    const { files, unreached, size, unpackedSize, budget, treeShaken } = await report;
    expect(files).toEqual(expect.arrayContaining(["package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/node.d.ts", "dist/bun.js", "dist/deno.js", "dist/types/presets/trellis.d.ts", "dist/bin.js", "dist/templates/app/src/app.ts"]));
    expect(files.filter((path) => !path.startsWith("dist/") && !["package.json", "README.md", "CHANGELOG.md"].includes(path))).toEqual([]);
    // Every module and declaration is reached from an export, the bin or the database thread; the
    // rest are files read at run time (templates, the dashboard's assets, the dev loader).
    expect(unreached).toEqual([]);
    console.log(`packed: ${(size / 1024).toFixed(0)} KB (budget ${budget.packed / 1024} KB), unpacked ${(unpackedSize / 1024).toFixed(0)} KB (budget ${budget.unpacked / 1024} KB), ${files.length} files`);
    expect(size).toBeLessThanOrEqual(budget.packed);
    expect(unpackedSize).toBeLessThanOrEqual(budget.unpacked);
    // `sideEffects`: an import whose bindings go unused leaves nothing in a user's bundle.
    expect(treeShaken.trim()).toBe("");
  });

  it("installs with no optional peer, type-checks the README sample strict and serves it", { timeout: 300_000 }, async () => {
    const { full, readme } = await installed();
    const modules = await readdir(join(full, "node_modules"));
    expect(modules).toContain("trellis");
    // The surfaces' peers are what the project asked for; the others stay out.
    for (const peer of ["pg", "better-sqlite3", "ioredis", "pino", "@aws-sdk", "nodemailer", "sharp"]) expect(modules, peer).not.toContain(peer);

    expect(APP, "the README sample serves on port 3000").not.toBe(readmeSample);
    await writeFile(join(readme, "package.json"), JSON.stringify({ name: "readme-sample", private: true, type: "module" }));
    await writeFile(join(readme, "app.ts"), APP);
    await writeFile(join(readme, "tsconfig.json"), JSON.stringify(TSCONFIG));
    await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", readme], { cwd: readme });

    const env = { ...process.env, AUTH_SECRET: randomBytes(32).toString("base64") };
    const server = spawn(process.execPath, [join(readme, "out/app.js")], { cwd: readme, env, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        let output = "";
        server.stdout.on("data", (chunk) => {
          output += chunk;
          const found = /http:\/\/[\w.:[\]-]+/.exec(output);
          if (found) resolveUrl(found[0]);
        });
        server.stderr.on("data", (chunk) => (output += chunk));
        server.on("exit", (code) => reject(new Error(`the app exited with ${code}:\n${output}`)));
      });
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok", database: "up" });
      const hello = await fetch(`${url}/rpc/hello`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(await hello.json()).toEqual({ json: "hello stranger" });
    } finally {
      server.kill("SIGTERM");
    }
  });

  it("trellis new writes a project whose npm test, typecheck, build and start work with no edits", { timeout: 600_000 }, async () => {
    const { plain, tarball } = await installed();
    const started = performance.now();
    const manifest = JSON.parse(await readFile(join(plain, "package.json"), "utf8"));
    expect(manifest.dependencies.trellis).toBe(`file:${tarball}`);
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["trellis", "zod"]);
    const test = await npm(plain, ["test"]);
    expect(test.stdout).toMatch(/2 passed/);
    console.log(`the new project's npm test: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await npm(plain, ["run", "typecheck"]);
    // The same server on Bun and on Deno, as docs/deploy.md has it: `trellis/node` swapped for the runtime's entry.
    const server = await readFile(join(plain, "src/server.ts"), "utf8");
    for (const runtime of ["bun", "deno"]) await writeFile(join(plain, `src/server-${runtime}.ts`), server.replace('"trellis/node"', `"trellis/${runtime}"`));
    await npm(plain, ["run", "build"]);
    expect((await readdir(join(plain, "dist/src"))).sort()).toEqual(expect.arrayContaining(["app.js", "server.js", "schema.js"]));
    const served = await startAndProbe(plain);
    expect(served.status).toBe(200);
    expect(served.body).toEqual({ status: "ok", database: "up" });
    // Bun runs the source (and reads .env itself); Deno runs the build.
    const runtimes = {
      bun: [join(root, "node_modules/.bin/bun"), "src/server-bun.ts"],
      deno: [join(root, "node_modules/.bin/deno"), "run", "-A", "--node-modules-dir=manual", "--no-lock", "--env-file=.env", "dist/src/server-deno.js"],
    };
    for (const [runtime, command] of Object.entries(runtimes)) {
      const probe = spawnSync(command[0]!, ["--version"], { timeout: 30_000 });
      if (probe.status !== 0) {
        console.log(`skipping the new project on ${runtime}: its binary cannot run here (${probe.error?.message ?? `exit ${probe.status}`})`);
        continue;
      }
      const onRuntime = await startAndProbe(plain, command);
      expect(onRuntime, runtime).toMatchObject({ status: 200, body: { status: "ok", database: "up" } });
    }
    console.log(`the new project's test, typecheck, build and a served /health: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });

  it(`trellis new --surfaces ${SURFACES} installs the peers, builds and serves`, { timeout: 600_000 }, async () => {
    const { full } = await installed();
    const manifest = JSON.parse(await readFile(join(full, "package.json"), "utf8"));
    expect(manifest.dependencies).toEqual(expect.objectContaining({ "@orpc/openapi": expect.any(String), "@modelcontextprotocol/sdk": expect.any(String), unstorage: expect.any(String) }));
    const installedOrpc = await readdir(join(full, "node_modules", "@orpc"));
    expect(installedOrpc).toEqual(expect.arrayContaining(["openapi", "zod", "json-schema"]));
    // Served from source under the CLI's dev loader would need a watcher; the build is what ships.
    // The build type-checks src/ (the plain project above runs `typecheck` as well: same script).
    await npm(full, ["run", "build"]);
    const served = await startAndProbe(full);
    expect(served.status).toBe(200);
  });

  it("npm install leaves package-lock.json as committed (checked on a copy)", { timeout: 120_000 }, async () => {
    const copy = await mkdtemp(join(tmpdir(), "trellis-lock-"));
    try {
      for (const file of ["package.json", "package-lock.json"]) await copyFile(join(root, file), join(copy, file));
      await run("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: copy });
      expect(await readFile(join(copy, "package-lock.json"), "utf8")).toBe(await readFile(join(root, "package-lock.json"), "utf8"));
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});
