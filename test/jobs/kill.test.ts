import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { App } from "../../presets/trellis.js";
import { dropSchema, waitFor } from "./support.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping the jobs SIGKILL test: DATABASE_URL is not set");

describe.runIf(url)("a replica killed during a handler", () => {
  const appSchema = `jobs_${randomBytes(5).toString("hex")}`;
  const jobsSchema = `${appSchema}_jobs`;
  let restarted: any;

  afterAll(async () => {
    await restarted?.close();
    await dropSchema(appSchema);
    await dropSchema(jobsSchema);
  });

  it("leaves its job to run again after a restart (at least once)", async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`create schema ${appSchema}`);
    await client.end();

    const fixture = fileURLToPath(new URL("./kill-child.fixture.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", fixture, appSchema, jobsSchema], { stdio: ["ignore", "pipe", "inherit"], env: process.env });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    await waitFor("the handler to start in the child", () => output.includes("started"), 40_000);
    const [, id, attempt] = /started (\S+) (\d+)/.exec(output)!;
    expect(attempt).toBe("1");
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    const done: { id: string; attempt: number }[] = [];
    const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${appSchema}` });
    restarted = new App({ db: { dialect: postgresDialect({ pool }), kind: "postgres" } })
      .jobs({ schema: jobsSchema, pollingInterval: 0.5, maintenanceInterval: 1 })
      .job("slow", { timeout: 1, retry: 2, backoff: false }, ({ job }) => void done.push({ id: job.id, attempt: job.attempt }))
      .build();
    await restarted.ready();
    await waitFor("the killed job to run again", () => done.length > 0, 20_000);
    expect(done).toEqual([{ id, attempt: 2 }]);
    await waitFor("completed", async () => (await restarted.sealed.service("jobs").get("slow", id))?.state === "completed");
  }, 60_000);
});
