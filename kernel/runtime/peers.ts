import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { TrellisError } from "../errors.js";

/**
 * The optional peer packages among `names` that are not installed where Trellis can load them.
 * Features that need one check at build (synchronously, without loading it) and fail with the
 * package's name. Presence is the package folder on Node's lookup path: an ESM-only package has no
 * `require` entry to resolve.
 */
export function missingPeers(names: readonly string[]): string[] {
  const require = createRequire(import.meta.url);
  const missing = names.filter((name) => !found.has(name) && !(require.resolve.paths(name) ?? []).some((folder) => existsSync(join(folder, name, "package.json"))));
  for (const name of names) if (!missing.includes(name)) found.add(name);
  return missing;
}

/** Peers found installed: a package does not go away while the process runs, so each app after the first skips the disk. */
const found = new Set<string>();

/** The command that installs `names`, for error messages: the fix, not only the diagnosis. */
export function installLine(names: readonly string[]): string {
  return `npm install ${names.join(" ")}`;
}

/**
 * Each peer as it was loaded: a second app in the same process (a test file's next test, a dev
 * reload) does not ask the module loader again, which under a loader hook (tsx, a test runner)
 * costs a round trip to the hook's thread. A failed load is not kept.
 */
const loaded = new Map<string, Promise<unknown>>();

/**
 * Loads an optional peer package, or throws `PEER_MISSING` naming the feature that needs it and the
 * `npm install` line; a package that is installed but fails to load keeps its own error.
 */
export function importPeer<T = any>(name: string, feature: string): Promise<T> {
  let module = loaded.get(name);
  if (!module) {
    module = load(name, feature);
    loaded.set(name, module);
    module.catch(() => loaded.delete(name));
  }
  return module as Promise<T>;
}

async function load(name: string, feature: string): Promise<unknown> {
  try {
    return await import(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const missing = (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && String((error as Error).message).includes(name);
    if (!missing) throw error;
    throw new TrellisError("PEER_MISSING", `${feature} needs the optional package "${name}", which is not installed. Install it: ${installLine([name])}`, { cause: error });
  }
}
