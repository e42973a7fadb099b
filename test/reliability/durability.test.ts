import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migrationCycles, writeCycles } from "./durability-cycles.js";

const dir = mkdtempSync(join(tmpdir(), "trellis-durability-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The two run at once (separate data directories and processes): the file takes as long as the longer.
// Their bounds are the named waits inside (60 s each); the test's own bound only stops a run gone wrong.
describe.concurrent("the embedded database under SIGKILL", () => {
  // 10 cycles here keep the suite short; `npm run bench -- durability` runs 100.
  it("keeps every acknowledged row across 10 kills at random moments, takes over the dead process's lock, and starts", async () => {
    const report = await writeCycles(join(dir, "writes"), 10);
    console.log(`durability: ${JSON.stringify(report)}`);
    expect(report.lost).toBe(0);
    // Every cycle not killed during start-up acknowledged at least one row.
    expect(report.acknowledged).toBeGreaterThanOrEqual(10 - report.killedStarting);
    expect(report.staleLocks).toBeGreaterThan(0);
  }, 480_000);

  it("a kill during a migration leaves the previous version (or the next one whole), and the next start migrates", async () => {
    const { states, migrated } = await migrationCycles(join(dir, "migrations"), 2);
    for (const state of states) {
      const whole = state.applied.length === 2 && state.wide === 120;
      const previous = state.applied.length <= 1 && state.wide === 0;
      expect(whole || previous, JSON.stringify(state)).toBe(true);
    }
    expect(migrated).toBe(true);
  }, 480_000);
});
