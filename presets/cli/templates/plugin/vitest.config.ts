import { defineConfig } from "vitest/config";

export default defineConfig({
  // The first test of a run may prepare the embedded database's template (a few seconds, once).
  test: { testTimeout: 30_000, hookTimeout: 60_000 },
});
