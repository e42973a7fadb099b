import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import tsupConfig from "../../tsup.config.js";

/**
 * One list of entry points, three places that must agree: package.json "exports" (what users
 * import), tsup's entries (what is built) and tsconfig.json's paths (how examples, docs samples and
 * tests import `trellis/*` from the source).
 */
const root = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { exports: Record<string, { types: string; import: string }>; bin: Record<string, string> };
const tsconfig = ts.readConfigFile(resolve(root, "tsconfig.json"), ts.sys.readFile).config as { compilerOptions: { paths: Record<string, string[]> } };
// `cli` is built for the `trellis` bin and `embedded-thread` for the embedded database's worker:
// neither is imported, so neither has an export of its own.
const { cli, "embedded-thread": thread, ...entry } = (tsupConfig as { entry: Record<string, string> }).entry;
const build = ts.readConfigFile(resolve(root, "tsconfig.build.json"), ts.sys.readFile).config as { include: string[] };

/** `.` is `index`; `./node` is `node`. */
const entryName = (subpath: string) => (subpath === "." ? "index" : subpath.slice(2));
const specifier = (subpath: string) => (subpath === "." ? "trellis" : `trellis/${subpath.slice(2)}`);

describe("entry points", () => {
  it("the trellis bin starts the built CLI", () => {
    expect(pkg.bin).toEqual({ trellis: "./dist/bin.js" });
    expect(cli).toBe("presets/cli/index.ts");
    expect(thread).toBe("kernel/embedded/worker/thread.ts");
  });

  it("every export is built from the source its tsconfig path names, with its declarations", () => {
    const exports = Object.entries(pkg.exports);
    expect(exports.map(([subpath]) => entryName(subpath)).sort()).toEqual(Object.keys(entry).sort());
    expect(exports.map(([subpath]) => specifier(subpath)).sort()).toEqual(Object.keys(tsconfig.compilerOptions.paths).sort());
    for (const [subpath, target] of exports) {
      const name = entryName(subpath);
      expect(target, subpath).toEqual({ types: `./dist/${name}.d.ts`, import: `./dist/${name}.js` });
      expect(tsconfig.compilerOptions.paths[specifier(subpath)], subpath).toEqual([`./${entry[name]}`]);
      // Declarations are emitted for the folders tsconfig.build.json includes.
      expect(build.include, subpath).toContain(entry[name]!.split("/")[0]);
    }
  });

  it("create-trellis is released with trellis, at its version, and starts trellis new", () => {
    const create = JSON.parse(readFileSync(resolve(root, "presets/create-trellis/package.json"), "utf8")) as { name: string; version: string; bin: Record<string, string>; dependencies: Record<string, string>; files: string[] };
    const version = (JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { version: string }).version;
    expect(create).toMatchObject({ name: "create-trellis", version, bin: { "create-trellis": "./index.js" }, dependencies: { trellis: version }, files: ["index.js"] });
    expect(readFileSync(resolve(root, "presets/create-trellis/index.js"), "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});
