import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { embedded } from "../../kernel/embedded/index.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { exitOf, killAfterEach } from "../support/children.js";
import { fixtureArgs } from "../support/fixture-child.js";
import { dropSchema, jobFamilies, waitFor } from "./support.js";

const fixture = fileURLToPath(new URL("./kill-child.fixture.mjs", import.meta.url));

// The families run at the same time: each its own child, database and jobs schema.
describe.each(jobFamilies())("a replica killed during a handler (%s)", { concurrent: true }, (family) => {
  // Its own list, so a test that ends kills its own child only.
  const track = killAfterEach();
  const appSchema = `jobs_${randomBytes(5).toString("hex")}`;
  const jobsSchema = family === "postgres" ? `${appSchema}_jobs` : "pgboss";
  const dataDir = family === "pglite" ? mkdtempSync(join(tmpdir(), "trellis-jobs-kill-")) : "";
  let restarted: any;

  afterAll(async () => {
    await restarted?.close();
    if (family === "postgres") {
      await dropSchema(appSchema);
      await dropSchema(jobsSchema);
    } else rmSync(dataDir, { recursive: true, force: true });
  });

  it("leaves its job to run again after a restart (at least once)", async ({ expect }) => {
    let db: () => DatabaseConfig;
    let args: string[];
    if (family === "postgres") {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`create schema ${appSchema}`);
      await client.end();
      args = ["postgres", appSchema, jobsSchema];
      db = () => ({ dialect: postgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, options: `-c search_path=${appSchema}` }) }), kind: "postgres" });
    } else {
      args = ["pglite", dataDir];
      db = () => embedded({ dataDir });
    }
    const child = track(spawn(process.execPath, [...fixtureArgs(fixture), ...args], { stdio: ["ignore", "pipe", "inherit"], env: process.env }));
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    await waitFor("the handler to start in the child", () => output.includes("started"), 50_000);
    const [, id, attempt] = /started (\S+) (\d+)/.exec(output)!;
    expect(attempt).toBe("1");
    child.kill("SIGKILL");
    await exitOf(child, 10_000, "the killed replica");

    const done: { id: string; attempt: number }[] = [];
    restarted = new App({ db: db() })
      .jobs({ schema: jobsSchema, pollingInterval: 0.5, maintenanceInterval: 1 })
      .job("slow", { timeout: 1, retry: 2, backoff: false }, ({ job }) => void done.push({ id: job.id, attempt: job.attempt }))
      .build();
    await restarted.sealed.ready();
    await waitFor("the killed job to run again", () => done.length > 0, 20_000);
    expect(done).toEqual([{ id, attempt: 2 }]);
    await waitFor("completed", async () => (await restarted.sealed.service("jobs").get("slow", id))?.state === "completed");
  }, 150_000); // the child's cold start, the restarted app's, then a retry after the job's 1 s timeout
});
