/**
 * `npm start`'s build step: the blog compiled to `.app/blog/server.js`, with the admin dashboard's
 * files beside it (where the bundled admin plugin looks for them), so plain Node runs it. A
 * TypeScript loader in the server's process costs about 100 MB (docs/operations.md#memory).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { build } from "tsup";
import { buildDashboard } from "../../plugins/admin/assets.js";

const out = new URL("../../.app/blog/", import.meta.url);
// unstorage stays a runtime import: its fs driver pulls CommonJS (anymatch) that an ESM bundle cannot require.
await build({ entry: { server: "examples/blog/server.ts", "embedded-thread": "kernel/embedded/worker/thread.ts" }, outDir: ".app/blog", format: ["esm"], target: "node20", sourcemap: true, silent: true, config: false, external: [/^unstorage/] });
const dashboard = new URL("admin-ui/", out);
const assets = await buildDashboard();
await mkdir(dashboard, { recursive: true });
for (const file of [assets.script, assets.style]) await writeFile(new URL(file.name, dashboard), file.body);
await writeFile(new URL("manifest.json", dashboard), JSON.stringify({ script: assets.script.name, style: assets.style.name }));
