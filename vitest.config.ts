import { defineConfig } from "vitest/config";
import { LongFilesFirst } from "./test/support/long-files-first.js";

/**
 * Files that run each in a process of its own (vitest's default isolation). Every other file runs
 * in a worker that has already loaded Trellis for an earlier file (`isolate: false`): loading the
 * kernel, the plugins and the stack under them again for each file cost one to two seconds of CPU
 * per file, a third of the suite's CPU. A file belongs here when it changes what the process holds
 * for good (signals, the database thread's life, process-wide listeners or memory it measures), or
 * when it mostly drives child processes (sharing saves it nothing). A file that leaves state behind
 * (an environment variable, fake timers, an app or a server not closed) must restore it in its
 * hooks, or be listed here.
 */
const ISOLATED = [
  "test/cli/**",
  "test/package/**",
  "test/docs/**",
  "test/examples/**",
  "test/reliability/**",
  "test/chaos/**",
  "test/perf/**",
  "test/scale/**",
  "test/embedded/**",
  "test/presets/**",
  "test/operability/**",
  "test/kernel/layout.test.ts",
  // OpenTelemetry's global tracer provider can be registered once per process.
  "test/telemetry/**",
  "test/regressions/telemetry-*.test.ts",
  "test/channels/channels.test.ts",
  "test/regressions/restore-force-keeps-data.test.ts",
];

export default defineConfig({
  // `trellis/*` imports (examples, docs samples) resolve through tsconfig.json's paths to the source.
  resolve: { tsconfigPaths: true },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Three workers on two cores: much of a file's time is waiting (child processes, the network,
    // servers starting, the main process transforming), so a third fills the cores' idle time. A
    // full run used ~760 CPU-seconds over 950 s of wall time with two. PGlite instances are large
    // (hundreds of MB), so not more.
    pool: "forks",
    maxWorkers: 3,
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: ["test/bench/**", "node_modules/**", ...ISOLATED],
          isolate: false,
          // `npm test` has just run `tsc --noEmit` over the whole project, test/types included: a second
          // compile of the type tests would only compete with the test files for the cores.
          typecheck: { enabled: process.env.npm_lifecycle_event !== "test", include: ["test/types/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
        },
      },
      { extends: true, test: { name: "isolated", include: ISOLATED.map((glob) => (glob.endsWith("/**") ? `${glob}/*.test.ts` : glob)) } },
    ],
  },
});
