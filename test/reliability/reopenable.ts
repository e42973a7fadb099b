import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { postgresDialect, sqliteDialect } from "../../kernel/db/dialect/index.js";
import { embedded } from "../../kernel/embedded/index.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import type { Family } from "../support/databases.js";

/**
 * One database that outlives the apps opened on it, as a deployed database outlives each release:
 * a data directory (PGlite), a file (SQLite) or a schema of DATABASE_URL (PostgreSQL).
 */
export interface Reopenable {
  family: Family;
  /** A new connection to the same database, for one App. */
  open(): DatabaseConfig;
  /** PostgreSQL: the schema the database lives in. */
  schema?: string;
  cleanup(): Promise<void>;
}

export async function reopenable(family: Family): Promise<Reopenable> {
  if (family === "postgres") {
    const connectionString = process.env.DATABASE_URL!;
    const schema = `r_${randomBytes(6).toString("hex")}`;
    await admin(connectionString, `create schema ${schema}`);
    return {
      family,
      schema,
      open: () => ({ dialect: postgresDialect({ connectionString, poolConfig: { max: 4, options: `-c search_path=${schema}` } }), kind: "postgres" }),
      cleanup: () => admin(connectionString, `drop schema if exists ${schema} cascade`),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), `trellis-${family}-`));
  const cleanup = async () => rmSync(dir, { recursive: true, force: true });
  if (family === "sqlite") return { family, open: () => ({ dialect: sqliteDialect({ filename: join(dir, "app.db") }), kind: "sqlite" }), cleanup };
  return { family, open: () => embedded({ dataDir: join(dir, "data") }), cleanup };
}

export async function admin(connectionString: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
