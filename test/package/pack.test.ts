import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { codeBlocks } from "../docs/markdown.js";

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

describe.skipIf(!enabled)("the package: packed, installed into an empty project, locked", () => {
  let dir: string;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("packs dist with its types, installs with no optional peer, type-checks the README sample strict and serves it", { timeout: 240_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), "trellis-pack-"));
    // `npm pack` runs `prepare`, which builds dist: nothing is built beforehand.
    const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    // The build's own output comes first on stdout; the JSON report is the last thing printed.
    const report = packed.stdout.slice(packed.stdout.lastIndexOf("\n[") + 1);
    const [{ filename, files }] = JSON.parse(report) as { filename: string; files: { path: string }[] }[];
    const paths = files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/index.d.ts", "dist/node.d.ts", "dist/types/presets/trellis.d.ts"]));
    expect(paths.filter((path) => !path.startsWith("dist/") && path !== "package.json" && path !== "README.md")).toEqual([]);

    const project = join(dir, "app");
    await run("mkdir", [project]);
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "packed-app", private: true, type: "module" }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(dir, filename)], { cwd: project, maxBuffer: 64 * 1024 * 1024 });
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
