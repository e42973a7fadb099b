// A replica that is killed while its handler runs: it sends one job and reports when the handler
// starts, then waits for the SIGKILL. `postgres <appSchema> <jobsSchema>` or `pglite <dataDir>`.
// It imports the package by name: the built bundles when dist/ is fresh (test/support/fixture-child.ts).
import pg from "pg";
import { App } from "trellis";
import { postgresDialect } from "trellis/db";
import { embedded } from "trellis/embedded";

const [family, first, second] = process.argv.slice(2);
const db =
  family === "pglite"
    ? embedded({ dataDir: first })
    : { dialect: postgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, options: `-c search_path=${first}` }) }), kind: "postgres" };
const app = new App({ db, onError: () => undefined })
  .jobs({ schema: second ?? "pgboss", pollingInterval: 0.5 })
  .job("slow", { timeout: 1, retry: 2, backoff: false }, async ({ job }) => {
    process.stdout.write(`started ${job.id} ${job.attempt}\n`);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  })
  .build();
await app.sealed.ready();
await app.sealed.service("jobs").send("slow", { from: "child" });
