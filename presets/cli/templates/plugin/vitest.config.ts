import { defineConfig } from "vitest/config";

export default defineConfig({
  // The first test of a run may prepare the embedded database's template (a few seconds, once).
  test: { testTimeout: 60_000, hookTimeout: 120_000 },
});
