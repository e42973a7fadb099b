import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "../docs/markdown.js";
import { freshBuild } from "../support/built-package.js";
import { freePort } from "../support/browser.js";

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

// The tests share the tarball and its install, and are otherwise independent: they run at once, as
// much of their time is npm waiting on the registry and the disk.
describe.skipIf(!enabled)("the package: packed, installed into an empty project, locked", { concurrent: true }, () => {
  let dir: string;
  let tarball: string;
  let files: { path: string }[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "trellis-pack-"));
    // `npm pack` runs `prepare`, which builds dist, unless dist/ already holds a build of the current
    // source (CI's `npm install` has just run the same build): then it packs that build.
    const scripts = freshBuild() ? ["--ignore-scripts"] : [];
    const packed = await run("npm", ["pack", "--json", ...scripts, "--pack-destination", dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    // The build's own output comes first on stdout; the JSON report is the last thing printed.
    const report = packed.stdout.slice(packed.stdout.lastIndexOf("\n[") + 1);
    const [packedFile] = JSON.parse(report) as { filename: string; files: { path: string }[] }[];
    tarball = join(dir, packedFile!.filename);
    files = packedFile!.files;
    // An empty project with the tarball as its only dependency; its bin is the `trellis` the tests
    // below run `new` with.
    await run("mkdir", [join(dir, "app")]);
    await writeFile(join(dir, "app", "package.json"), JSON.stringify({ name: "packed-app", private: true, type: "module" }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: join(dir, "app"), maxBuffer: 64 * 1024 * 1024 });
  }, 300_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("packs dist with its types, installs with no optional peer, type-checks the README sample strict and serves it", { timeout: 240_000 }, async () => {
    const paths = files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/index.d.ts", "dist/node.d.ts", "dist/types/presets/trellis.d.ts", "dist/bin.js", "dist/templates/app/src/app.ts"]));
    expect(paths.filter((path) => !path.startsWith("dist/") && path !== "package.json" && path !== "README.md")).toEqual([]);

    const project = join(dir, "app");
    const installed = await readdir(join(project, "node_modules"));
    expect(installed).toContain("trellis");
    for (const peer of ["pg", "better-sqlite3", "ioredis", "pino", "@aws-sdk", "@modelcontextprotocol"]) expect(installed, peer).not.toContain(peer);

    expect(APP, "the README sample serves on port 3000").not.toBe(readmeSample);
    await writeFile(join(project, "app.ts"), APP);
    await writeFile(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG));
    await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", project], { cwd: project });

    const env = { ...process.env, AUTH_SECRET: randomBytes(32).toString("base64") };
    const server = spawn(process.execPath, [join(project, "out/app.js")], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
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

  /** Runs `npm run <script>` (or any npm command) in a project; rejects with its output on failure. */
  const npm = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) => run("npm", args, { cwd, env: { ...process.env, CI: "", NO_COLOR: "1", ...env }, maxBuffer: 64 * 1024 * 1024 });

  /** Starts `npm start` on a free port and resolves with /health's answer once it serves. */
  async function startAndProbe(project: string): Promise<{ status: number; body: unknown; seconds: number }> {
    const started = performance.now();
    // A port nothing listens on now (a random one could be another file's server, whose /health answers).
    const port = String(await freePort());
    // The embedded database, as a new project starts (DATABASE_URL from the test run would mean PostgreSQL, and pg is not installed).
    const { DATABASE_URL: _unused, ...env } = process.env;
    const server = spawn("npm", ["start"], { cwd: project, env: { ...env, PORT: port, NODE_ENV: "" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    server.stdout.on("data", (chunk) => (output += chunk));
    server.stderr.on("data", (chunk) => (output += chunk));
    try {
      for (let attempt = 0; attempt < 240; attempt++) {
        if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}:\n${output}`);
        const health = await fetch(`http://localhost:${port}/health`).catch(() => undefined);
        if (health) return { status: health.status, body: await health.json(), seconds: (performance.now() - started) / 1000 };
        await new Promise((wait) => setTimeout(wait, 250));
      }
      throw new Error(`npm start did not serve within a minute:\n${output}`);
    } finally {
      // npm start's process group: npm, the CLI and the server it runs (gone already if it failed).
      try {
        process.kill(-server.pid!, "SIGTERM");
      } catch {
        // exited on its own: the error above says why
      }
    }
  }

  it("trellis new writes a project whose npm test, typecheck, build and start work with no edits", { timeout: 600_000 }, async () => {
    const started = performance.now();
    // The CLI from the tarball, as `npm exec --package=<tarball> -- trellis new` runs it: npm names the
    // package in npm_config_package, from which the new project depends on the same tarball. (The
    // bin installed for the first test is used, which saves npm exec's second install of the tarball.)
    const bin = join(dir, "app", "node_modules", ".bin", "trellis");
    await run(bin, ["new", "my-app", "--no-install"], { cwd: dir, env: { ...process.env, npm_config_package: tarball } });
    const project = join(dir, "my-app");
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies.trellis).toBe(`file:${tarball}`);
    await npm(project, ["install", "--no-audit", "--no-fund", "--prefer-offline"]);
    const served = await startAndProbe(await buildFirst(project));
    expect(served.status).toBe(200);
    expect(served.body).toEqual({ status: "ok", database: "up" });
    console.log(`trellis new to a served /health: ${((performance.now() - started) / 1000).toFixed(1)} s (warm npm cache, including the project's test, typecheck and build)`);
  });

  /** The new project's own checks, in the order its README gives them; returns the project. */
  async function buildFirst(project: string): Promise<string> {
    const tested = performance.now();
    const test = await npm(project, ["test"]);
    expect(test.stdout).toMatch(/2 passed/);
    console.log(`the new project's npm test: ${((performance.now() - tested) / 1000).toFixed(1)} s`);
    await npm(project, ["run", "typecheck"]);
    await npm(project, ["run", "build"]);
    expect((await readdir(join(project, "dist/src"))).sort()).toEqual(expect.arrayContaining(["app.js", "server.js", "schema.js"]));
    return project;
  }

  it("trellis new --surfaces openapi,mcp,files,live,admin installs the peers, type-checks and serves", { timeout: 600_000 }, async () => {
    const bin = join(dir, "app", "node_modules", ".bin", "trellis");
    await run(bin, ["new", "all-surfaces", "--surfaces", "openapi,mcp,files,live,admin", "--trellis", `file:${tarball}`, "--no-install"], { cwd: dir });
    const project = join(dir, "all-surfaces");
    await npm(project, ["install", "--no-audit", "--no-fund", "--prefer-offline"]);
    const installed = await readdir(join(project, "node_modules", "@orpc"));
    expect(installed).toEqual(expect.arrayContaining(["openapi", "zod", "json-schema"]));
    await npm(project, ["run", "typecheck"]);
    // Served from source under the CLI's dev loader would need a watcher; the build is what ships.
    await npm(project, ["run", "build"]);
    const served = await startAndProbe(project);
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
