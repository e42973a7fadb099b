/**
 * `npm run bench`: every benchmark, each printing its figures and ratios against a baseline measured
 * in the same run. Pass names to run a subset: `npm run bench -- kernel query`.
 */
// Benchmarks measure the app, not a terminal: the default logger stays off, as under a test runner
// (an app that passes its own `logger` still logs).
process.env.NODE_ENV ??= "test";

const suites: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  kernel: () => import("./kernel.js"),
  startup: () => import("./startup.js"),
  auth: () => import("./auth.js"),
  query: () => import("./query.js"),
  rows: () => import("./rows.js"),
  live: () => import("./live.js"),
  http: () => import("./http.js"),
  durability: () => import("./durability.js"),
  "rate-limit": () => import("./rate-limit.js"),
  surfaces: () => import("./surfaces.js"),
  admin: () => import("./admin.js"),
  dashboard: () => import("./dashboard.js"),
  types: () => import("./types.js"),
  files: () => import("./files.js"),
  memory: () => import("./memory.js"),
  jobs: () => import("./jobs.js"),
  mail: () => import("./mail.js"),
  chaos: () => import("./chaos.js"),
  soak: () => import("./soak.js"),
};

const wanted = process.argv.slice(2);
for (const [name, load] of Object.entries(suites)) {
  if (wanted.length && !wanted.includes(name)) continue;
  try {
    const suite = await load();
    await suite.run();
  } catch (error) {
    console.error(`\n## ${name}: failed`, error);
    process.exitCode = 1;
  }
}
