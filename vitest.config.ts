import { defineConfig } from "vitest/config";

export default defineConfig({
  // `trellis/*` imports (examples, docs samples) resolve through tsconfig.json's paths to the source.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    typecheck: { enabled: true, include: ["test/types/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite instances are large (hundreds of MB); keep parallelism to the two cores.
    pool: "forks",
    maxWorkers: 2,
  },
});
