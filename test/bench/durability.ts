import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrationCycles, writeCycles } from "../reliability/durability-cycles.js";

/** `npm run bench -- durability`: 100 SIGKILL cycles on one embedded data directory, plus kills during a migration. */
export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "trellis-durability-bench-"));
  try {
    const writes = await writeCycles(join(dir, "writes"), 100);
    const migrations = await migrationCycles(join(dir, "migrations"), 5);
    const intact = migrations.states.every((state) => (state.applied.length === 2 && state.wide === 120) || (state.applied.length <= 1 && state.wide === 0));
    console.log("\n## Durability (SIGKILL at random moments, embedded data directory)");
    console.log(`  write cycles                         ${writes.cycles} (${writes.killedStarting} killed during start-up)`);
    console.log(`  acknowledged rows                    ${writes.acknowledged}`);
    console.log(`  acknowledged rows lost               ${writes.lost}  (${writes.lost === 0 ? "OK" : "LOST"})`);
    console.log(`  stale locks taken over               ${writes.staleLocks}`);
    console.log(`  time per cycle (spawn, open, write)  ${writes.msPerCycle} ms`);
    console.log(`  kills during a migration             ${migrations.states.length - 1}: ${intact ? "previous version or next one whole each time" : "PARTIAL STATE"}; next start migrated: ${migrations.migrated}`);
    if (writes.lost > 0 || !intact || !migrations.migrated) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
