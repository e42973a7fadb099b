import { execFile, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "../docs/markdown.js";
import { freshBuild } from "../support/built-package.js";
import { once } from "../support/once.js";
import { npm, startAndProbe } from "./projects.js";
import { publishToLocalRegistry, type LocalRegistry } from "./registry.js";
import { checkTarball, type TarballReport } from "./tarball.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
// Slow (a pack, a registry that proxies every other package, an install through it): once per CI run.
const enabled = Boolean(process.env.CI || process.env.TRELLIS_REGISTRY_TEST || process.env.TRELLIS_PACK_TEST);
if (!enabled) {
  console.log("skipping the published-package test: it packs the repository, publishes it to verdaccio and installs new projects through it (set CI, TRELLIS_PACK_TEST=1 or TRELLIS_REGISTRY_TEST=1)");
}

/**
 * What a new project writes: the README's sample, as "Start your own project" says, listening on a
 * free port and printing where. Trellis is its only dependency.
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

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

let dir: string | undefined;
let registry: LocalRegistry | undefined;
const SURFACES = "openapi,mcp,files,live,admin";

/** One `npm pack` for the whole file: the ecosystem's checks read it, the registry publishes it. */
const packed = once(async () => {
  dir = await mkdtemp(join(tmpdir(), "trellis-published-"));
  // `npm pack` runs `prepare`, which builds dist, unless dist/ already holds a build of the current
  // source (CI's `npm install` has just run the same build): then it packs that build.
  const scripts = freshBuild() ? ["--ignore-scripts"] : [];
  const started = performance.now();
  const result = await run("npm", ["pack", "--json", ...scripts, "--pack-destination", dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  // The build's own output comes first on stdout; the JSON report is the last thing printed.
  const report = result.stdout.slice(result.stdout.lastIndexOf("\n[") + 1);
  const [file] = JSON.parse(report) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  console.log(`npm pack: ${seconds(started)}`);
  return { dir, tarball: join(dir, file!.filename), size: file!.size, unpackedSize: file!.unpackedSize, files: file!.files.map((entry) => entry.path) };
});

/** `trellis` and `create-trellis` published once to a local registry (verdaccio on a loopback port). */
const published = once(async () => {
  const { dir, tarball } = await packed();
  const started = performance.now();
  await mkdir(join(dir, "registry"));
  registry = await publishToLocalRegistry(root, join(dir, "registry"), tarball);
  console.log(`verdaccio started, trellis and create-trellis published: ${seconds(started)}`);
  return registry;
});

/**
 * The one install, from an empty folder, what a user types first, with every surface: `npm create
 * trellis@latest all-surfaces -- --surfaces ...` (create-trellis runs `trellis new` with the options
 * after `--`, which runs `npm install`: both through the registry). Its dependencies are the plain
 * project's plus the surfaces' optional peers; its node_modules serves the plain project and the
 * README sample too (a superset changes nothing a plain project does), so the file pays for one
 * install, not two.
 */
const installed = once(async () => {
  const { env } = await published();
  const work = join(dir!, "create");
  await mkdir(work);
  const started = performance.now();
  await run("npm", ["create", "--yes", "trellis@latest", "all-surfaces", "--", "--surfaces", SURFACES], { cwd: work, env, maxBuffer: 64 * 1024 * 1024 });
  console.log(`npm create trellis@latest -- --surfaces ${SURFACES}, its npm install included: ${seconds(started)}`);
  const project = join(work, "all-surfaces");
  // What `trellis new` wrote, before the build adds to it.
  return { project, sources: await sources(project) };
});

/**
 * The plain project, from the other first command: the `trellis` package's own bin, fetched by `npm
 * exec` from the same registry, writing it without installing (`--no-install`). Its node_modules is
 * a link to the installed project's. The render runs beside the install; the link waits for it.
 */
const plain = once(async () => {
  const { env } = await published();
  const work = join(dir!, "exec");
  await mkdir(work);
  const started = performance.now();
  await run("npm", ["exec", "--yes", "--", "trellis", "new", "my-app", "--no-install"], { cwd: work, env, maxBuffer: 64 * 1024 * 1024 });
  console.log(`npm exec trellis new my-app --no-install: ${seconds(started)}`);
  const project = join(work, "my-app");
  // What `trellis new` wrote, before the tests below add files to it (the Bun and Deno servers).
  const written = await sources(project);
  await symlink(join((await installed()).project, "node_modules"), join(project, "node_modules"), "dir");
  return { project, sources: written };
});

afterAll(async () => {
  await registry?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/*
 * Where the assertions went when the file stopped installing twice (npm create trellis@latest
 * installed the plain project, npm exec trellis new the all-surfaces one):
 * - npm create "writes and installs the project the published trellis new renders" (lock with
 *   version, integrity and resolved; bin; sources equal to the installed CLI's render): the npm
 *   create test, now on the all-surfaces project npm create installs. Its manifest check, exactly
 *   trellis and zod, is the npm exec test's, on the plain project npm exec writes.
 * - npm exec "--surfaces installs the surfaces' peers and no other, builds and serves" (manifest,
 *   lock, bin, sources equal to the installed CLI's render with the same options, the peers in and
 *   out of node_modules, build, start): the npm create test, the same project now written by npm
 *   create, which shows the options after `--` reach `trellis new`.
 * - npm exec "writes the same project as npm create" (npm exec fetching trellis from the registry,
 *   rendering the plain project): the npm exec test, whose render is compared with the installed
 *   CLI's own, as the npm create test's is.
 * - the plain project's scripts (npm test, typecheck, build, start on Node, Bun and Deno): unchanged,
 *   on the project npm exec writes, its node_modules a link to the installed project's.
 * - the README sample: unchanged, on the installed project's node_modules.
 * - the tarball's checks, the `file:<tarball>` dependency and the lockfile: unchanged.
 * Before that, the two files this one replaced (test/package/registry.test.ts and
 * test/package/pack.test.ts, each with its own pack, install and builds) went as follows:
 * - publint, attw, files/size/tree-shaking: unchanged, on the one tarball.
 * - registry "writes and installs the project trellis new renders": the npm create test (lock,
 *   bin, sources equal to the installed CLI's render) and the npm exec test (manifest); its build
 *   and start, the plain project's scripts test (one build, one start).
 * - pack "npm test, typecheck, build and start work with no edits" (and Bun, Deno): the plain
 *   project's scripts test. Its `file:<tarball>` dependency (npm exec --package=<tarball>) is the
 *   "depends on that tarball" test.
 * - registry "npm exec trellis new writes and installs the same project": lock, bin and install in
 *   the npm create test; npm exec's CLI rendering the plain project (--no-install) in the npm exec
 *   test.
 * - pack "--surfaces installs the peers, builds and serves" and "installs with no optional peer":
 *   the npm create test.
 * - pack "type-checks the README sample strict and serves it": the README test.
 * - pack "npm install leaves package-lock.json as committed": unchanged.
 */
// The tests share the tarball, the registry and the one install, and are otherwise independent:
// they run at once, as much of their time is npm waiting on the registry and the disk. The
// ecosystem's checks need only the tarball, and npm exec's plain render only the registry, so they
// run while npm installs.
describe.skipIf(!enabled)("the package: packed, checked, published to a registry, installed into new projects, locked", { concurrent: true }, () => {
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

  it("trellis new run from a tarball (npm exec --package=<tarball>) makes the project depend on that tarball", { timeout: 240_000 }, async () => {
    const { dir, tarball } = await packed();
    // The CLI as the tarball ships it (dist/bin.js is what was packed), run as `npm exec
    // --package=<tarball> -- trellis new` runs it: npm names the package in npm_config_package.
    await run(process.execPath, [join(root, "dist/bin.js"), "new", "from-tarball", "--no-install"], { cwd: dir, env: { ...process.env, npm_config_package: tarball } });
    const manifest = JSON.parse(await readFile(join(dir, "from-tarball", "package.json"), "utf8"));
    expect(manifest.dependencies.trellis).toBe(`file:${tarball}`);
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["trellis", "zod"]);
  });

  it(`npm create trellis@latest -- --surfaces ${SURFACES} writes and installs the project the published trellis new renders, with the surfaces' peers and no other; it builds and serves`, { timeout: 900_000 }, async () => {
    const { version, url, env } = await published();
    const { project, sources: written } = await installed();
    // The options after `--` reached `trellis new`: the surfaces' peers are the project's dependencies.
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies).toEqual(expect.objectContaining({ trellis: `^${version}`, "@orpc/openapi": expect.any(String), "@modelcontextprotocol/sdk": expect.any(String), unstorage: expect.any(String) }));
    const lock = JSON.parse(await readFile(join(project, "package-lock.json"), "utf8"));
    // The version published a moment ago (unique to this run), with the registry's checksum.
    const locked = lock.packages["node_modules/trellis"];
    expect(locked).toMatchObject({ version, integrity: expect.stringMatching(/^sha512-/) });
    if (locked.resolved) expect(locked.resolved).toBe(`${url}/trellis/-/trellis-${version}.tgz`);
    expect(await readdir(join(project, "node_modules/trellis/dist"))).toContain("bin.js");

    // The installed package's own CLI, with the same options, rendering the published version without installing.
    const rendered = join(dir!, "rendered", "all-surfaces");
    await run(process.execPath, [join(project, "node_modules/trellis/dist/bin.js"), "new", rendered, "--surfaces", SURFACES, "--no-install", "--trellis", `^${version}`]);
    expect(written).toEqual(await sources(rendered));

    const modules = await readdir(join(project, "node_modules"));
    expect(modules).toContain("trellis");
    // The surfaces' peers are what the project asked for; the others stay out.
    for (const peer of ["pg", "better-sqlite3", "ioredis", "pino", "@aws-sdk", "nodemailer", "sharp"]) expect(modules, peer).not.toContain(peer);
    expect(await readdir(join(project, "node_modules", "@orpc"))).toEqual(expect.arrayContaining(["openapi", "zod", "json-schema"]));
    // Served from source under the CLI's dev loader would need a watcher; the build is what ships.
    // The build type-checks src/ (the plain project runs `typecheck` as well: same script).
    await npm(project, ["run", "build"], env);
    const served = await startAndProbe(project);
    expect(served.status).toBe(200);
  });

  it("npm exec trellis new, fetched from the registry, writes the plain project the installed trellis new renders: trellis and zod alone", { timeout: 600_000 }, async () => {
    const { version } = await published();
    const { project, sources: written } = await plain();
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies).toEqual({ trellis: `^${version}`, zod: expect.any(String) });
    // The installed package's own CLI (the one install's), rendering the published version without installing.
    const rendered = join(dir!, "rendered", "my-app");
    await run(process.execPath, [join((await installed()).project, "node_modules/trellis/dist/bin.js"), "new", rendered, "--no-install", "--trellis", `^${version}`]);
    expect(written).toEqual(await sources(rendered));
  });

  it("the plain project: npm test, typecheck, build and start work with no edits, on Node, Bun and Deno", { timeout: 900_000 }, async () => {
    const { env } = await published();
    const { project } = await plain();
    const started = performance.now();
    const test = await npm(project, ["test"], env);
    expect(test.stdout).toMatch(/2 passed/);
    console.log(`the new project's npm test: ${seconds(started)}`);
    await npm(project, ["run", "typecheck"], env);
    // The same server on Bun and on Deno, as docs/deploy.md has it: `trellis/node` swapped for the runtime's entry.
    const server = await readFile(join(project, "src/server.ts"), "utf8");
    for (const runtime of ["bun", "deno"]) await writeFile(join(project, `src/server-${runtime}.ts`), server.replace('"trellis/node"', `"trellis/${runtime}"`));
    await npm(project, ["run", "build"], env);
    expect((await readdir(join(project, "dist/src"))).sort()).toEqual(expect.arrayContaining(["app.js", "server.js", "schema.js"]));
    const served = await startAndProbe(project);
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
      const onRuntime = await startAndProbe(project, command);
      expect(onRuntime, runtime).toMatchObject({ status: 200, body: { status: "ok", database: "up" } });
    }
    console.log(`the new project's test, typecheck, build and a served /health on Node, Bun and Deno: ${seconds(started)}`);
  });

  it("type-checks the README sample strict and serves it", { timeout: 600_000 }, async () => {
    // The sample needs trellis and nothing else: the one install's node_modules (a superset changes nothing it does).
    const { project } = await installed();
    const readme = join(dir!, "readme");
    await mkdir(readme);
    await symlink(join(project, "node_modules"), join(readme, "node_modules"), "dir");
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

/**
 * A project's own files and their text: what `trellis new` wrote, without what install, test, build
 * and start add, and with `.env`'s AUTH_SECRET (random per project) masked.
 */
async function sources(project: string, folder = ""): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const entry of await readdir(join(project, folder), { withFileTypes: true })) {
    const file = join(folder, entry.name);
    if (/^(node_modules|dist|\.data|\.app)$/.test(file) || file === "package-lock.json" || file.endsWith(".tsbuildinfo")) continue;
    if (entry.isDirectory()) Object.assign(found, await sources(project, file));
    else found[file] = (await readFile(join(project, file), "utf8")).replace(/^AUTH_SECRET=.+$/m, "AUTH_SECRET=<random>");
  }
  return found;
}
