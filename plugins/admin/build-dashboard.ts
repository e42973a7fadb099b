/**
 * `npm run build` step after tsup: bundles the dashboard into `dist/admin-ui/` (hashed names plus a
 * manifest the plugin reads at run time, so an installed package needs no bundler) and prints the
 * size of its JavaScript and CSS, raw and gzipped, against the 150 KB gzipped budget.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { assetSizes, buildDashboard } from "./assets.js";

const BUDGET = 150 * 1024;
const out = new URL("../../dist/admin-ui/", import.meta.url);

const assets = await buildDashboard();
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
for (const file of [assets.script, assets.style]) await writeFile(new URL(file.name, out), file.body);
await writeFile(new URL("manifest.json", out), JSON.stringify({ script: assets.script.name, style: assets.style.name }));
const { bytes, gzip } = assetSizes(assets);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
console.log(`admin dashboard: ${assets.script.name} + ${assets.style.name}, ${kb(bytes)} (${kb(gzip)} gzipped; budget ${kb(BUDGET)})`);
if (gzip > BUDGET) {
  console.error("admin dashboard: over the gzipped size budget");
  process.exitCode = 1;
}
