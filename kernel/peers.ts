import { createRequire } from "node:module";

/**
 * The optional peer packages among `names` that cannot be resolved from Trellis. Features that need
 * one check at build (synchronously, without loading it) and fail with the package's name.
 */
export function missingPeers(names: readonly string[]): string[] {
  const require = createRequire(import.meta.url);
  return names.filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}
