import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBuild } from "../support/built-package.js";
import { npm, startAndProbe } from "./projects.js";
import { publishToLocalRegistry, type LocalRegistry } from "./registry.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
// Slow (a registry that proxies every other package, two installs through it): once per CI run.
const enabled = Boolean(process.env.CI || process.env.TRELLIS_REGISTRY_TEST);
if (!enabled) console.log("skipping the local-registry test: it publishes to verdaccio and installs through it (set CI or TRELLIS_REGISTRY_TEST=1)");

/**
 * `trellis` and `create-trellis` published to a local registry (verdaccio on a loopback port, its
 * storage in a temporary folder), then, from an empty folder, what a user types first:
 * `npm create trellis@latest my-app`, and the new project's own scripts with no edits; then
 * `npm exec trellis new my-app`, the same project from the same published release.
 */
describe.skipIf(!enabled)("published to a registry: npm create trellis@latest, npm exec trellis new", () => {
  let dir: string;
  let registry: LocalRegistry;
  let created: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "trellis-registry-"));
    const started = performance.now();
    // A build of the current sources is packed as it is; otherwise `npm pack` builds first (`prepare`).
    const scripts = freshBuild() ? ["--ignore-scripts"] : [];
    const packed = await run("npm", ["pack", "--json", ...scripts, "--pack-destination", dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    const [file] = JSON.parse(packed.stdout.slice(packed.stdout.lastIndexOf("\n[") + 1)) as { filename: string }[];
    await mkdir(join(dir, "registry"));
    registry = await publishToLocalRegistry(root, join(dir, "registry"), join(dir, file!.filename));
    console.log(`packed, verdaccio started, trellis and create-trellis published: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 300_000);
  afterAll(async () => {
    await registry?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // The project's npm test and typecheck run in test/package/pack.test.ts, on a project the packed
  // CLI renders: here, the project npm create wrote is shown to be that same project (its files
  // equal what `trellis new` renders for the published version), installed, built and served.
  it("writes and installs the project trellis new renders, and serves it with no edits", { timeout: 900_000 }, async () => {
    const { version, env, url } = registry;
    const work = join(dir, "empty");
    await mkdir(work);
    const started = performance.now();
    // create-trellis runs `trellis new`, which runs `npm install`: both through the registry.
    await run("npm", ["create", "--yes", "trellis@latest", "my-app"], { cwd: work, env, maxBuffer: 64 * 1024 * 1024 });
    console.log(`npm create trellis@latest, its npm install included: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const project = join(work, "my-app");
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies).toEqual({ trellis: `^${version}`, zod: expect.any(String) });
    const lock = JSON.parse(await readFile(join(project, "package-lock.json"), "utf8"));
    // The version published a moment ago (unique to this run), with the registry's checksum.
    const locked = lock.packages["node_modules/trellis"];
    expect(locked).toMatchObject({ version, integrity: expect.stringMatching(/^sha512-/) });
    if (locked.resolved) expect(locked.resolved).toBe(`${url}/trellis/-/trellis-${version}.tgz`);
    expect(await readdir(join(project, "node_modules/trellis/dist"))).toContain("bin.js");

    // The installed package's own CLI, rendering the published version without installing.
    const rendered = join(dir, "rendered", "my-app");
    await run(process.execPath, [join(project, "node_modules/trellis/dist/bin.js"), "new", rendered, "--no-install", "--trellis", `^${version}`]);
    expect(await sources(project)).toEqual(await sources(rendered));

    await npm(project, ["run", "build"], env);
    expect(await readdir(join(project, "dist/src"))).toEqual(expect.arrayContaining(["app.js", "server.js", "schema.js"]));
    const served = await startAndProbe(project);
    expect(served.status).toBe(200);
    expect(served.body).toEqual({ status: "ok", database: "up" });
    console.log(`npm create trellis@latest to a served /health: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    created = project;
  });

  // The other first command: the `trellis` package's own bin, fetched by npm exec from the same
  // registry. It writes and installs the project `npm create` wrote (whose build the pack test runs).
  it("npm exec trellis new writes and installs the same project", { timeout: 600_000 }, async () => {
    const { version, env } = registry;
    const work = join(dir, "exec");
    await mkdir(work);
    const started = performance.now();
    await run("npm", ["exec", "--yes", "trellis", "new", "my-app"], { cwd: work, env, maxBuffer: 64 * 1024 * 1024 });
    console.log(`npm exec trellis new, its npm install included: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const project = join(work, "my-app");
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies).toEqual({ trellis: `^${version}`, zod: expect.any(String) });
    const lock = JSON.parse(await readFile(join(project, "package-lock.json"), "utf8"));
    expect(lock.packages["node_modules/trellis"]).toMatchObject({ version, integrity: expect.stringMatching(/^sha512-/) });
    expect(await readdir(join(project, "node_modules/trellis/dist"))).toContain("bin.js");
    expect(created, "the npm create project").toBeDefined();
    expect(await sources(project)).toEqual(await sources(created!));
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
