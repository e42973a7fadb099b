import { performance } from "node:perf_hooks";
import { embedded } from "../../kernel/embedded/index.js";
import { testApp } from "../../presets/testing.js";
import { createBlog } from "../../examples/blog/app.js";

/**
 * A fresh test app with the blog's schema, ready to serve: `trellis/testing`'s copy of the migrated
 * schema (an idle database put back to the migrated state) against the way it was before, a new
 * in-memory database from the template, migrated, for every test. Each figure is from `testApp()`
 * (or `start()`) called to its first answer, then `close()`, in the same process, medians of `runs`.
 */
export async function run(runs = 15): Promise<void> {
  const ready = async (open: () => Promise<{ handle(request: Request): Promise<Response>; close(): Promise<void> }>) => {
    const began = performance.now();
    const app = await open();
    const response = await app.handle(new Request("http://localhost/rpc/post/list", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }));
    if (response.status !== 200) throw new Error(`post.list answered ${response.status}`);
    const took = performance.now() - began;
    await app.close();
    return took;
  };
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const kit = () => ready(async () => (await testApp(({ db }) => createBlog(db, { logger: false }))).app);
  const before = () => ready(() => createBlog(embedded({ dataDir: "memory://", thread: "main" }), { logger: false }).start());

  const first = await kit();
  // A file's later tests: the first `runs` of them, while V8 is still compiling the paths they take,
  // and a file's worth (40), most of them on compiled code.
  const fresh: number[] = [];
  for (let i = 0; i < Math.max(runs, 40); i++) fresh.push(await kit());
  const early = fresh.slice(0, runs);
  const old: number[] = [];
  for (let i = 0; i < Math.max(3, Math.floor(runs / 3)); i++) old.push(await before());
  console.log("\n## A fresh test app with the blog's schema (trellis/testing)");
  console.log(`  first in this process (its schema's dump on disk, or migrated)   ${first.toFixed(0)} ms`);
  for (const [label, values] of [[`tests 2 to ${runs + 1} of a file`, early], [`tests 2 to ${fresh.length + 1} of a file`, fresh]] as const) {
    const ratio = median(old) / median(values);
    console.log(`  each later one, ${label.padEnd(22)}: a copy of the migrated schema  ${median(values).toFixed(1)} ms median (target < 50: ${median(values) < 50 ? "OK" : "ABOVE"}), ${ratio.toFixed(0)}x faster (target 20x: ${ratio >= 20 ? "OK" : "BELOW"})`);
  }
  console.log(`  before: a new memory:// database, migrated, per test              ${median(old).toFixed(0)} ms median`);
  await postgres(ready, median, Math.max(5, Math.floor(runs / 3)));
}

/**
 * On PostgreSQL (DATABASE_URL): `testApp(create, { databaseUrl })`, a database copied from the
 * schema's migrated template, against a new schema migrated per test (what the project's own
 * PostgreSQL suites do), each to its first answer; closing (the drop) is not counted.
 */
async function postgres(
  ready: (open: () => Promise<{ handle(request: Request): Promise<Response>; close(): Promise<void> }>) => Promise<number>,
  median: (values: number[]) => number,
  runs: number,
): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return console.log("\n(the PostgreSQL figures need DATABASE_URL)");
  const { openDatabase } = await import("../support/databases.js");
  const { postgresLive } = await import("../../kernel/db/dialect/live-providers.js");
  const copy = () =>
    ready(async () => {
      const t = await testApp(({ db }) => createBlog(db, { logger: false }), { databaseUrl });
      return { handle: (request: Request) => t.app.handle(request), close: () => t.close() };
    });
  const migrated = () =>
    ready(async () => {
      const database = await openDatabase("postgres");
      const app = await createBlog({ kind: "postgres", dialect: database.dialect, live: postgresLive({ connectionString: databaseUrl }) }, { logger: false }).start();
      return { handle: (request: Request) => app.handle(request), close: async () => (await app.close(), await database.close()) };
    });
  const first = await copy();
  const copies: number[] = [];
  for (let i = 0; i < runs; i++) copies.push(await copy());
  const old: number[] = [];
  for (let i = 0; i < runs; i++) old.push(await migrated());
  console.log("\n## The same on PostgreSQL (testApp(create, { databaseUrl }))");
  console.log(`  first in this process (the schema's template found, or migrated)  ${first.toFixed(0)} ms`);
  console.log(`  each later one: CREATE DATABASE ... TEMPLATE                       ${median(copies).toFixed(0)} ms median of ${runs}`);
  console.log(`  before: a new schema, migrated, per test                           ${median(old).toFixed(0)} ms median (${(median(old) / median(copies)).toFixed(1)}x)`);
}

/** `npm run bench -- testapp:fresh`; also the part a suite of edit-and-test loops can call. */
export const cases = { fresh: () => run() };
