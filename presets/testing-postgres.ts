import { randomBytes } from "node:crypto";
import type { DatabaseConfig } from "../kernel/index.js";
import { postgresLive } from "../kernel/db/dialect/live-providers.js";
import { postgresDialect } from "../kernel/db/dialect/postgres.js";
import { parsePostgresUrl } from "../kernel/db/dialect/postgres-url.js";
import { importPeer } from "../kernel/index.js";

/**
 * A test's own PostgreSQL database for `testApp(create, { databaseUrl })`: a copy of its schema's
 * migrated template, made with `CREATE DATABASE ... TEMPLATE` (the server copies its files; no
 * migration runs), ahead of time: each test's copy is made while the previous test runs, and
 * renamed for it when it comes. The template of a schema,
 * `trellis_tpl_<key>` (its versions and the plugins that add tables, as for the embedded copies), is
 * made once by the first test that needs it, on the same server, and kept there for the next test,
 * file and run. Each test's database, `trellis_test_<seconds>_<random>`, is dropped when it closes;
 * the one made ahead for a test that never came is dropped by a later run, an hour on.
 */
export interface PostgresCopy {
  /** The database config the app is given: its pool connects at the first query, once `prepare()` made the database. */
  readonly database: DatabaseConfig;
  /** Makes the test's database from the schema's template (migrating the template first when it is new). */
  prepare(key: string, migrateTemplate: (database: DatabaseConfig) => Promise<void>): Promise<void>;
  /** Drops the test's database (the app is closed first). Idempotent. */
  drop(): Promise<void>;
}

/** Templates made or found in this process, by schema key. */
const templates = new Map<string, Promise<string>>();
/** A copy of each template made ahead for the next test (renamed to that test's name when it comes). */
const spares = new Map<string, Promise<string>>();
/** Copies older than this are left over (a process that ended with its spare unused) and dropped. */
const LEFT_OVER_MS = 60 * 60 * 1000;
let swept: Promise<void> | undefined;

/** `trellis_test_<seconds since the epoch>_<random>`: the time lets a later run drop what an ended process left. */
function copyName(): string {
  return `trellis_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString("hex")}`;
}

export function postgresCopy(databaseUrl: string): PostgresCopy {
  // A malformed URL is refused here, before any database is made.
  parsePostgresUrl(databaseUrl);
  const name = copyName();
  let made = false;
  let dropping: Promise<void> | undefined;
  return {
    database: databaseAt(databaseUrl, name),
    async prepare(key, migrateTemplate) {
      swept ??= sweep(databaseUrl);
      let template = templates.get(key);
      if (!template) {
        template = templateFor(databaseUrl, key, migrateTemplate);
        templates.set(key, template);
        template.catch(() => templates.delete(key));
      }
      const source = await template;
      // Taken before any wait, so two tests starting together never share one.
      const pending = spares.get(source);
      spares.delete(source);
      const spare = await pending?.catch(() => undefined);
      if (spare) await admin(databaseUrl, `alter database ${spare} rename to ${name}`);
      else await admin(databaseUrl, `create database ${name} template ${source}`);
      made = true;
      // The next test's copy is made while this one runs (one at a time per template).
      if (!spares.has(source)) {
        const next = copyName();
        const making = admin(databaseUrl, `create database ${next} template ${source}`).then(() => next);
        making.catch(() => {});
        spares.set(source, making);
      }
    },
    drop: () => (dropping ??= made ? admin(databaseUrl, `drop database if exists ${name} with (force)`).then(() => undefined) : Promise.resolve()),
  };
}

/** Drops the copies an ended process left (older than an hour, and not in use). */
async function sweep(databaseUrl: string): Promise<void> {
  const rows = (await admin(databaseUrl, `select datname from pg_database where datname ~ '^trellis_test_[0-9]+_'`).catch(() => [])) as { datname: string }[];
  const before = Date.now() - LEFT_OVER_MS;
  for (const { datname } of rows) {
    if (Number(datname.split("_")[2]) * 1000 < before) await admin(databaseUrl, `drop database if exists ${datname}`).catch(() => {});
  }
}

/** The schema's template: found on the server, else migrated under a name of its own and renamed (another process may win the rename). */
async function templateFor(databaseUrl: string, key: string, migrate: (database: DatabaseConfig) => Promise<void>): Promise<string> {
  const template = `trellis_tpl_${key}`;
  if (await exists(databaseUrl, template)) return template;
  const work = `${template}_${randomBytes(4).toString("hex")}`;
  await admin(databaseUrl, `create database ${work}`);
  try {
    await migrate(databaseAt(databaseUrl, work));
    await admin(databaseUrl, `alter database ${work} rename to ${template}`);
  } catch (error) {
    await admin(databaseUrl, `drop database if exists ${work} with (force)`).catch(() => {});
    // 42P04: another process made the same template first; it is as good as ours.
    if ((error as { code?: string }).code !== "42P04") throw error;
  }
  return template;
}

function databaseAt(databaseUrl: string, database: string): DatabaseConfig {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  const connectionString = url.toString();
  // Live queries listen on a connection of their own, opened only when a query streams.
  return { kind: "postgres", dialect: postgresDialect({ connectionString, poolConfig: { max: 4 } }), live: postgresLive({ connectionString }) };
}

async function exists(databaseUrl: string, database: string): Promise<boolean> {
  const rows = await admin(databaseUrl, `select 1 from pg_database where datname = '${database}'`);
  return rows.length > 0;
}

/** One statement on the server DATABASE_URL names, on a connection of its own. */
async function admin(databaseUrl: string, statement: string): Promise<unknown[]> {
  const { default: pg } = await importPeer<typeof import("pg")>("pg", "testApp() on PostgreSQL (databaseUrl)");
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(statement)).rows;
  } finally {
    await client.end();
  }
}
