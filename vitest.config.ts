import { defineConfig } from "vitest/config";
import { LongFilesFirst } from "./test/support/long-files-first.js";

export default defineConfig({
  // `trellis/*` imports (examples, docs samples) resolve through tsconfig.json's paths to the source.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    // `npm test` has just run `tsc --noEmit` over the whole project, test/types included: a second
    // compile of the type tests would only compete with the test files for the cores.
    typecheck: { enabled: process.env.npm_lifecycle_event !== "test", include: ["test/types/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Three workers on two cores: much of a file's time is waiting (child processes, the network,
    // servers starting, the main process transforming), so a third fills the cores' idle time. A
    // full run used ~760 CPU-seconds over 950 s of wall time with two. PGlite instances are large
    // (hundreds of MB), so not more.
    pool: "forks",
    maxWorkers: 3,
    sequence: { sequencer: LongFilesFirst },
  },
});
