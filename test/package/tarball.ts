import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The packed tarball's budget, in bytes: a user downloads it with every install. It stood at 377 KB
 * packed and 1.26 MB unpacked when stated (2026-11-28, after the build stopped shipping the
 * declarations no export reaches); the margin is for the plugins still to come.
 */
export const BUDGET = { packed: 550 * 1024, unpacked: 2000 * 1024 };

/** Files the package reads at run time by path rather than importing: never reached by an import. */
const READ_AT_RUN_TIME = [/^dist\/templates\//, /^dist\/admin-ui\//, /^dist\/dev-loader\.mjs$/];

export interface TarballReport {
  files: string[];
  exports: string[];
  size: number;
  unpackedSize: number;
  budget: typeof BUDGET;
  /** Modules and declarations under dist/ that no export, bin or thread reaches. */
  unreached: string[];
  publint: { code: number; output: string };
  attw: { code: number; output: string; entrypoints: string[]; problems: { kind: string; entrypoint: string; resolutionKind: string }[] };
  /** What a bundler keeps of `import { ... } from "trellis/..."` for every export, every binding unused. */
  treeShaken: string;
}

interface Manifest {
  exports: Record<string, { types: string; import: string }>;
  bin: Record<string, string>;
}

/** A tool's exit code and output, without throwing on a failure (the test reports it). */
async function tool(command: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? String(error) };
  }
}

/** The ecosystem's checks over one packed tarball: publint, attw, what it ships and what a bundler keeps. */
export async function checkTarball(packed: { root: string; tarball: string; size: number; unpackedSize: number; files: string[] }): Promise<TarballReport> {
  const { root, tarball } = packed;
  const bin = (name: string) => join(root, "node_modules/.bin", name);
  const work = await mkdtemp(join(tmpdir(), "trellis-tarball-"));
  try {
    const unpacked = join(work, "node_modules/trellis");
    await mkdir(unpacked, { recursive: true });
    await run("tar", ["xzf", tarball, "-C", unpacked, "--strip-components=1"]);
    const manifest = JSON.parse(await readFile(join(unpacked, "package.json"), "utf8")) as Manifest;
    const [publint, attw, unreached, treeShaken] = await Promise.all([
      tool(bin("publint"), ["run", tarball, "--strict"], work),
      tool(bin("attw"), [tarball, "--profile", "esm-only", "--format", "json"], work),
      unreachedFiles(unpacked, manifest),
      bundleUnused(root, work, manifest),
    ]);
    const report = JSON.parse(attw.stdout || "{}") as { analysis?: { entrypoints?: Record<string, unknown> }; problems?: Record<string, TarballReport["attw"]["problems"]> };
    return {
      files: packed.files,
      exports: Object.keys(manifest.exports),
      size: packed.size,
      unpackedSize: packed.unpackedSize,
      budget: BUDGET,
      unreached,
      publint: { code: publint.code, output: publint.stdout + publint.stderr },
      attw: {
        code: attw.code,
        output: attw.stderr || attw.stdout.slice(0, 4000),
        entrypoints: Object.keys(report.analysis?.entrypoints ?? {}),
        problems: Object.values(report.problems ?? {}).flat(),
      },
      treeShaken,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Walks relative imports (`from`, `import()`, type `import("...")`) from every entry point. */
async function unreachedFiles(pkg: string, manifest: Manifest): Promise<string[]> {
  const all: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      entry.isDirectory() ? await walk(path) : all.push(path);
    }
  };
  await walk(join(pkg, "dist"));
  const starts = [
    ...Object.values(manifest.exports).flatMap((target) => [target.types, target.import]),
    ...Object.values(manifest.bin),
    // Loaded by the embedded database's host from beside embedded.js (kernel/embedded/worker/host.ts).
    "dist/embedded-thread.js",
  ].map((path) => resolve(pkg, path));
  const reached = new Set<string>();
  const known = new Set(all);
  for (let file = starts.pop(); file; file = starts.pop()) {
    if (reached.has(file) || !known.has(file)) continue;
    reached.add(file);
    for (const [, spec] of (await readFile(file, "utf8")).matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const path = resolve(dirname(file), spec!);
      if (!file.endsWith(".d.ts")) starts.push(path);
      else {
        const declaration = path.replace(/\.js$/, ".d.ts");
        starts.push(known.has(declaration) ? declaration : join(declaration.replace(/\.d\.ts$/, ""), "index.d.ts"));
      }
    }
  }
  return all
    .filter((file) => !reached.has(file))
    .map((file) => relative(pkg, file))
    .filter((path) => !READ_AT_RUN_TIME.some((pattern) => pattern.test(path)))
    .sort();
}

/**
 * Bundles a module that imports every export and uses none, with every other package external:
 * with `sideEffects` right, nothing of Trellis is left.
 */
async function bundleUnused(root: string, work: string, manifest: Manifest): Promise<string> {
  const { build } = (await import("esbuild")) as typeof import("esbuild");
  const entry = Object.keys(manifest.exports)
    .map((subpath, index) => `import * as unused${index} from "${subpath === "." ? "trellis" : `trellis/${subpath.slice(2)}`}";`)
    .join("\n");
  const result = await build({
    stdin: { contents: entry, resolveDir: work, loader: "js" },
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    // Every bare import but Trellis's own stays external: what is left is Trellis's code alone.
    plugins: [{ name: "external", setup: (on) => on.onResolve({ filter: /^[^./]/ }, (args) => (/^trellis(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true })) }],
    logLevel: "silent",
    absWorkingDir: root,
  });
  return result.outputFiles[0]!.text;
}
