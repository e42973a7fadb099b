import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "presets/trellis.ts",
    kernel: "kernel/index.ts",
    embedded: "kernel/embedded/index.ts",
    db: "kernel/db/dialect/entry.ts",
    schema: "kernel/schema/index.ts",
    secrets: "kernel/secrets/index.ts",
    kv: "kernel/kv/index.ts",
    storage: "kernel/storage/index.ts",
    plugins: "plugins/index.ts",
    presets: "presets/index.ts",
    client: "presets/client.ts",
    node: "presets/node.ts",
    redis: "adapters/redis/index.ts",
  },
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  // Optional peers and the stack stay external: the integrator's installed versions are used.
  // esbuild only bundles the dashboard when running from source; the build ships it prebuilt.
  external: ["esbuild", /^@electric-sql\//, /^@better-auth\//, "better-auth", "better-sqlite3", "pg", "ioredis", /^@orpc\//, "kysely", "zod"],
});
