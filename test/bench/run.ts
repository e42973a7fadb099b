/**
 * `npm run bench`: every benchmark, each printing its figures and ratios against a baseline measured
 * in the same run. Pass names to run a subset: `npm run bench -- kernel query`; `suite:case` runs one
 * part a suite exports in `cases` (`npm run bench -- kernel:telemetry http:telemetry`).
 */
// Benchmarks measure the app, not a terminal: the default logger stays off, as under a test runner
// (an app that passes its own `logger` still logs).
process.env.NODE_ENV ??= "test";

/** A suite runs whole, or (`suite:case`) one of the parts it exports as `cases`. */
const suites: Record<string, () => Promise<{ run(): Promise<void>; cases?: Record<string, () => Promise<void>> }>> = {
  kernel: () => import("./kernel.js"),
  startup: () => import("./startup.js"),
  auth: () => import("./auth.js"),
  query: () => import("./query.js"),
  rows: () => import("./rows.js"),
  live: () => import("./live.js"),
  channels: () => import("./channels.js"),
  http: () => import("./http.js"),
  durability: () => import("./durability.js"),
  "rate-limit": () => import("./rate-limit.js"),
  surfaces: () => import("./surfaces.js"),
  admin: () => import("./admin.js"),
  dashboard: () => import("./dashboard.js"),
  types: () => import("./types.js"),
  files: () => import("./files.js"),
  images: () => import("./images.js"),
  memory: () => import("./memory.js"),
  jobs: () => import("./jobs.js"),
  mail: () => import("./mail.js"),
  chaos: () => import("./chaos.js"),
  soak: () => import("./soak.js"),
  backups: () => import("./backups.js"),
  // Resource hooks: empty hooks on a write (hooks-write.ts) and a relation filter against a join (relation-filter.ts).
  hooks: () => import("./hooks.js"),
  loops: () => import("./loops.js"),
  audit: () => import("./audit.js"),
  testapp: () => import("./test-app.js"),
  // Tenant-scoped resources against owner-scoped ones (docs/organizations.md).
  tenant: () => import("./tenant.js"),
  runtimes: () => import("./runtimes.js"),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name.split(":")[0]! in suites));
if (unknown.length) {
  console.error(`no suite named ${unknown.join(", ")}; suites: ${Object.keys(suites).join(", ")}`);
  process.exit(2);
}
for (const [name, load] of Object.entries(suites)) {
  const picked = wanted.filter((entry) => entry === name || entry.startsWith(`${name}:`));
  if (wanted.length && !picked.length) continue;
  try {
    const suite = await load();
    const parts = picked.includes(name) ? [] : picked.map((entry) => entry.slice(name.length + 1));
    if (parts.length === 0) await suite.run();
    for (const part of parts) {
      const run = suite.cases?.[part];
      if (!run) throw new Error(`${name} has no case "${part}" (cases: ${Object.keys(suite.cases ?? {}).join(", ") || "none"})`);
      await run();
    }
  } catch (error) {
    console.error(`\n## ${name}: failed`, error);
    process.exitCode = 1;
  }
}
