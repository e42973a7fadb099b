// Databases for tests: one fresh, isolated database per call, in every family Trellis
// supports. PostgreSQL suites run only when DATABASE_URL points at a server.
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import type { Dialect, SqliteDatabase } from "kysely";
import pg from "pg";
import { postgresDialect } from "../../kernel/db/dialect/postgres.js";
import { sqliteDialect } from "../../kernel/db/dialect/sqlite.js";
import { reusedPglite } from "./reused-pglite.js";
import { within } from "./within.js";

export type Family = "pglite" | "sqlite" | "postgres";

export interface TestDatabase {
  kind: "postgres" | "sqlite";
  dialect: Dialect;
  family: Family;
  /** PostgreSQL: the schema this database lives in (its migrator's tables belong there too). */
  schema?: string;
  /** Releases the database; safe after the test destroyed its Kysely instance. */
  close(): Promise<void>;
}

let warned = false;

/** pglite and sqlite always; postgres only when DATABASE_URL is set. */
export function families(): Family[] {
  if (process.env.DATABASE_URL) return ["pglite", "sqlite", "postgres"];
  if (!warned) {
    warned = true;
    console.log("skipping PostgreSQL suites: DATABASE_URL is not set");
  }
  return ["pglite", "sqlite"];
}

export async function openDatabase(family: Family): Promise<TestDatabase> {
  switch (family) {
    case "pglite": {
      // Empty as a new instance, but one the file's previous test released, emptied (reused-pglite.ts).
      const database = await reusedPglite();
      return { kind: "postgres", family, dialect: database.dialect, close: database.close };
    }
    case "sqlite": {
      const database = new Database(":memory:");
      return {
        kind: "sqlite",
        family,
        dialect: sqliteDialect({ database: database as unknown as SqliteDatabase }),
        close: async () => {
          if (database.open) database.close();
        },
      };
    }
    case "postgres":
      return openPostgres();
  }
}

/** A schema of its own in DATABASE_URL, first on every pooled connection's search_path. */
async function openPostgres(): Promise<TestDatabase> {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error("openDatabase('postgres') needs DATABASE_URL");
  const schema = `t_${randomBytes(6).toString("hex")}`;
  await admin(connectionString, `create schema ${schema}`);
  const pool = new pg.Pool({ connectionString, max: 4, options: `-c search_path=${schema}` });
  return {
    kind: "postgres",
    family: "postgres",
    schema,
    dialect: postgresDialect({ pool }),
    // Bounded and named: a connection the app never released shows here as the step that waits.
    close: async () => {
      if (!pool.ended) await within(pool.end(), 20_000, `the pool of schema ${schema} ending (a connection not released)`);
      await within(admin(connectionString, `drop schema if exists ${schema} cascade`), 20_000, `dropping schema ${schema} (a lock held by a connection left open)`);
    },
  };
}

async function admin(connectionString: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
