import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { copyFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The `memory://` template kept on disk between processes, in the project's
 * `node_modules/.cache/trellis/` (where build tools keep theirs): a test runner that starts a
 * process per test file then pays initdb once per machine, not once per file. Keyed by the PGlite
 * version and the extensions in it; written atomically (temporary file, then rename), so a
 * concurrent reader sees a whole template or none. Any failure only means no cache.
 */
export function templateCachePath(extensions: string): string | undefined {
  try {
    const version = pgliteVersion();
    const dir = join(process.cwd(), "node_modules", ".cache", "trellis");
    statSync(join(process.cwd(), "node_modules"));
    return join(dir, `pglite-${version}-${extensions || "plain"}.tar`);
  } catch {
    return undefined;
  }
}

export function readCachedTemplate(path: string | undefined): Blob | undefined {
  if (!path) return undefined;
  try {
    return new Blob([readFileSync(path)]);
  } catch {
    return undefined;
  }
}

export async function writeCachedTemplate(path: string | undefined, template: Blob): Promise<void> {
  await kept(path, async (partial) => writeFileSync(partial, new Uint8Array(await template.arrayBuffer())));
}

/** Keeps a template already written to `file` (a new cluster's dump, fresh-cluster.ts) as the cached one. */
export async function keepCachedTemplate(path: string | undefined, file: string): Promise<void> {
  await kept(path, (partial) => copyFile(file, partial));
}

/** Writes the cached template through a temporary file renamed into place; a failure leaves no cache. */
async function kept(path: string | undefined, write: (partial: string) => Promise<void>): Promise<void> {
  if (!path) return;
  try {
    mkdirSync(dirname(path), { recursive: true });
    const partial = `${path}.${process.pid}.partial`;
    await write(partial);
    renameSync(partial, path);
  } catch {
    // A read-only project still works; it only runs initdb or builds its template again next time.
  }
}

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve("@electric-sql/pglite"));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (manifest.name === "@electric-sql/pglite" && manifest.version) return manifest.version;
    } catch {
      // not the package root yet
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("PGlite's package.json not found");
    dir = parent;
  }
}
