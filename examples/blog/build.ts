/**
 * `npm start`'s build step: the blog compiled to `.app/blog/server.js`, with the admin dashboard's
 * files beside it (where the bundled admin plugin looks for them), so plain Node runs it. A
 * TypeScript loader in the server's process costs about 100 MB (docs/operations.md#memory).
 *
 * The build is written to a folder of its own first, then each file is renamed into `.app/blog`:
 * a blog already running from `.app/blog` (its database thread's script and dashboard files are
 * read after start), or a second build at the same time, never reads a half-written file.
 */
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";
import { buildDashboard } from "../../plugins/admin/assets.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const out = join(root, ".app/blog");
await mkdir(join(root, ".app"), { recursive: true });
const staging = await mkdtemp(join(root, ".app/blog-building-"));
try {
  // unstorage stays a runtime import: its fs driver pulls CommonJS (anymatch) that an ESM bundle cannot require.
  await build({ entry: { server: "examples/blog/server.ts", "embedded-thread": "kernel/embedded/worker/thread.ts" }, outDir: relative(process.cwd(), staging), format: ["esm"], target: "node20", sourcemap: true, silent: true, config: false, external: [/^unstorage/] });
  const dashboard = join(staging, "admin-ui");
  const assets = await buildDashboard();
  await mkdir(dashboard, { recursive: true });
  for (const file of [assets.script, assets.style]) await writeFile(join(dashboard, file.name), file.body);
  await writeFile(join(dashboard, "manifest.json"), JSON.stringify({ script: assets.script.name, style: assets.style.name }));
  for (const entry of await readdir(staging, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const from = join(entry.parentPath, entry.name);
    const to = join(out, relative(staging, from));
    await mkdir(dirname(to), { recursive: true });
    await rename(from, to);
  }
} finally {
  await rm(staging, { recursive: true, force: true });
}
