import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

/** What `npm run build` reads: a change to any of these makes dist/ stale. */
const SOURCES = ["kernel", "plugins", "presets", "package.json", "tsup.config.ts", "tsconfig.build.json"];
/** What it writes: tsup's bundles first, then its onSuccess files, then the dashboard. */
const OUTPUTS = ["dist/cli.js", "dist/index.js", "dist/bin.js", "dist/index.d.ts", "dist/templates/app/src/app.ts", "dist/admin-ui/manifest.json"];

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

/**
 * Whether dist/ holds a build of the current sources (`npm install` runs the build, so CI always has
 * one): every output present and older than none of the sources. Tests that start the `trellis`
 * command many times run the bundle then, as an installed package does, instead of compiling the
 * sources in each process; without a fresh build they run the sources.
 */
export function freshBuild(): boolean {
  let built: number;
  try {
    built = Math.min(...OUTPUTS.map((output) => statSync(join(root, output)).mtimeMs));
  } catch {
    return false;
  }
  return Math.max(...SOURCES.map((source) => newest(join(root, source)))) < built;
}
