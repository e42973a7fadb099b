import pg from "pg";
import { openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/** The families jobs run on: embedded always, PostgreSQL when DATABASE_URL is set (SQLite is refused). */
export function jobFamilies(): Family[] {
  if (process.env.DATABASE_URL) return ["pglite", "postgres"];
  console.log("skipping the PostgreSQL jobs suites: DATABASE_URL is not set");
  return ["pglite"];
}

/** A test database plus a pg-boss schema of its own, dropped with it. */
export async function openJobsDatabase(family: Family): Promise<TestDatabase & { jobsSchema: string }> {
  const database = await openDatabase(family);
  const jobsSchema = database.schema ? `${database.schema}_jobs` : "pgboss";
  return {
    ...database,
    jobsSchema,
    close: async () => {
      await database.close();
      if (database.schema) await dropSchema(jobsSchema);
    },
  };
}

export async function dropSchema(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${name} cascade`);
  } finally {
    await client.end();
  }
}

/** Polls `check` until it returns true, failing after `timeoutMs` with `what`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
