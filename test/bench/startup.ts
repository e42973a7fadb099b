import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Embedded start-up: cold and warm `memory://`, a data directory, and resident memory after `start()`. */
export async function run(): Promise<void> {
  const child = fileURLToPath(new URL("./startup-child.ts", import.meta.url));
  const output = execFileSync(process.execPath, ["--import", "tsx", child], { encoding: "utf8" });
  const r = JSON.parse(output.trim().split("\n").at(-1)!);
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const best = Math.min(...r.warm);
  console.log("\n## Embedded database start-up (fresh process)");
  console.log(`  blog app start() on a new data directory (initdb + migrations)  ${r.firstStart.toFixed(0)} ms`);
  console.log(`  blog app start() reopening that data directory                 ${r.reopenStart.toFixed(0)} ms`);
  console.log(`  memory:// cold (first in process: initdb, template)           ${r.coldMemory.toFixed(0)} ms`);
  console.log(`  memory:// warm (from the template)                             ${r.warm.map((w: number) => w.toFixed(0)).join(" / ")} ms  (target < 800: ${best < 800 ? "OK" : "ABOVE"})`);
  console.log(`  resident memory: ${mb(r.rssBefore)} at process start, ${mb(r.rssAfterStart)} after start() of the blog on the embedded database`);
}
