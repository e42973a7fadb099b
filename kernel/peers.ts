import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * The optional peer packages among `names` that are not installed where Trellis can load them.
 * Features that need one check at build (synchronously, without loading it) and fail with the
 * package's name. Presence is the package folder on Node's lookup path: an ESM-only package has no
 * `require` entry to resolve.
 */
export function missingPeers(names: readonly string[]): string[] {
  const require = createRequire(import.meta.url);
  return names.filter((name) => !(require.resolve.paths(name) ?? []).some((folder) => existsSync(join(folder, name, "package.json"))));
}
