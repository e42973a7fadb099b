import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { defineConfig } from "tsup";

/** Each entry point of package.json "exports" (`trellis/<name>`, `index` for `trellis`) and its source. */
const entry = {
  index: "presets/trellis.ts",
  kernel: "kernel/index.ts",
  embedded: "kernel/embedded/index.ts",
  db: "kernel/db/dialect/entry.ts",
  schema: "kernel/schema/index.ts",
  secrets: "kernel/secrets/index.ts",
  kv: "kernel/kv/index.ts",
  storage: "kernel/storage/index.ts",
  plugins: "plugins/index.ts",
  presets: "presets/index.ts",
  client: "presets/client.ts",
  node: "presets/node.ts",
  redis: "kernel/redis/index.ts",
  testing: "presets/testing.ts",
  bun: "presets/bun.ts",
  deno: "presets/deno.ts",
};

/** The `trellis` command: bundled like the entries, started by a small executable file (dist/bin.js). */
const cli = { cli: "presets/cli/index.ts" };

/** Not an export: the embedded database thread's module, loaded from beside `embedded.js` (kernel/embedded/worker/host.ts). */
const internal = { "embedded-thread": "kernel/embedded/worker/thread.ts" };

export default defineConfig({
  entry: { ...entry, ...cli, ...internal },
  format: ["esm"],
  clean: true,
  target: "node20",
  // Optional peers and the stack stay external: the integrator's installed versions are used.
  // esbuild only bundles the dashboard when running from source; the build ships it prebuilt.
  external: ["esbuild", /^@electric-sql\//, /^@better-auth\//, "better-auth", "better-sqlite3", "pg", "ioredis", /^@orpc\//, "kysely", "zod"],
  // Declarations come from tsc rather than a bundled d.ts: a few seconds instead of two minutes,
  // and no type chunks to split. dist/<entry>.d.ts re-exports the emitted tree in dist/types.
  dts: false,
  onSuccess: async () => {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit" });
    for (const [name, source] of Object.entries(entry)) {
      writeFileSync(`dist/${name}.d.ts`, `export * from "./types/${source.replace(/\.ts$/, ".js")}";\n`);
    }
    pruneDeclarations(Object.keys(entry).map((name) => `dist/${name}.d.ts`));
    writeFileSync("dist/bin.js", '#!/usr/bin/env node\nimport "./cli.js";\n', { mode: 0o755 });
    // `trellis new` copies these; they are plain files, not compiled.
    cpSync("presets/cli/templates", "dist/templates", { recursive: true });
    // The module hooks `trellis dev` registers (presets/cli/dev/loader.mjs): plain JavaScript, loaded by URL.
    cpSync("presets/cli/dev/loader.mjs", "dist/dev-loader.mjs");
  },
});

/**
 * tsc declares every source file; the package ships only the declarations an entry point's types
 * reach (the CLI's and the dashboard's internals are nobody's import), which is about a third less
 * to download. attw (test/package) fails the build's package if a reached file were missing.
 */
function pruneDeclarations(entries: string[]): void {
  const reached = new Set<string>();
  const queue = entries.map((file) => resolve(file));
  for (let file = queue.pop(); file; file = queue.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const path = resolve(dirname(file), spec!).replace(/\.js$/, ".d.ts");
      queue.push(existsSync(path) ? path : join(path.replace(/\.d\.ts$/, ""), "index.d.ts"));
    }
  }
  const sweep = (dir: string): void => {
    for (const item of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, item.name);
      if (item.isDirectory()) {
        sweep(path);
        if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      } else if (!reached.has(path)) rmSync(path);
    }
  };
  sweep(resolve("dist/types"));
}
