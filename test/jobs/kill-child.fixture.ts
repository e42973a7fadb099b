// A replica that is killed while its handler runs: it sends one job and reports when the handler
// starts, then waits for the SIGKILL.
import pg from "pg";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { App } from "../../presets/trellis.js";

const [appSchema, jobsSchema] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, options: `-c search_path=${appSchema}` });
const app = new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres" }, onError: () => undefined })
  .jobs({ schema: jobsSchema, pollingInterval: 0.5 })
  .job("slow", { timeout: 1, retry: 2, backoff: false }, async ({ job }) => {
    process.stdout.write(`started ${job.id} ${job.attempt}\n`);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  })
  .build();
await app.sealed.ready();
await app.sealed.service("jobs")!.send("slow", { from: "child" });
