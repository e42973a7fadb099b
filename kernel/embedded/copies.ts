import { createHash } from "node:crypto";
import { readdirSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DatabaseConfig } from "../contracts/resources.js";
import { PGliteDialect } from "../db/dialect/pglite.js";
import { reentrant } from "../db/dialect/reentrant.js";
import { backupEmbedded } from "./backup.js";
import { MEMORY, openInstance, type EmbeddedClient } from "./instance.js";
import { loadVector } from "./extensions.js";
import { readCachedTemplate, templateCachePath, writeCachedTemplate } from "./template-cache.js";

/**
 * Copies of a migrated in-memory database, for tests (`trellis/testing`). Loading a dump into a new
 * PGlite (what its `clone()` does) costs 0.5 to 0.8 s whatever the schema; putting an instance back
 * to the state it had right after its migrations (empty every table, restore the rows the
 * migrations left, rewind every sequence) costs about 10 ms. So a test gets an instance at the
 * migrated state of its app's schema: an idle one put back after the previous test of the same
 * schema, else a new one loaded from that schema's dump (kept on disk beside the `memory://`
 * template, so the first test of the next file skips the migrations too), else a new one from the
 * plain template, migrated by the app and recorded as the schema's template.
 */
interface Template {
  /** Puts an instance back to the migrated state. */
  reset: string;
  /**
   * Every relation then, with its columns: an instance where one changed or went (DDL in a test) is
   * not reused. Tables created since (an app's own bookkeeping, created on first use) are emptied.
   */
  relations: Map<string, Relation>;
}

interface Relation {
  name: string;
  /** A table that is not a partition: emptied on reset. */
  table: boolean;
  columns: string;
  /** Its size on disk, indexes and TOAST left out. */
  bytes: number;
}

/** A table larger than this when a test ends is truncated rather than deleted from. */
const FILLED_BYTES = 1024 * 1024;

interface Pooled {
  client: EmbeddedClient;
  key: string;
  /** At its key's migrated state (reused, or loaded from the key's dump), not the plain template. */
  migrated: boolean;
  /** While idle: closes it unless a test takes it first. */
  expiry?: NodeJS.Timeout;
}

const templates = new Map<string, Template>();
const idle = new Map<string, Pooled[]>();
const SHARED_BUFFERS = "16MB";
/**
 * An idle instance is closed after this long: an open PGlite keeps its process alive (its timers),
 * so a script or a test runner that does not end its workers would otherwise never exit. Tests of a
 * file follow one another well within it.
 */
const IDLE_MS = 2_000;
/** Dumps of migrated schemas kept on disk (about 40 MB each), newest first. */
const KEEP_ON_DISK = 8;

/** What `leaseDatabase()` hands out: the database an app is given, and the steps around its migrations. */
export interface DatabaseLease {
  /** A database config whose instance is chosen on its first query, for the schema `key()` named. */
  readonly database: DatabaseConfig;
  /** Names the schema (see `schemaKey`) before the first query. */
  key(key: string): void;
  /**
   * Opens the instance now; true when it is at the migrated state of its key's schema (a copy of
   * that schema's template), so the app's migrations have nothing to do.
   */
  current(): Promise<boolean>;
  /** After the app's migrations: records the migrated state as the template of its key (first time only). */
  migrated(): Promise<void>;
  /** Puts the instance back in the pool at its template state (or closes it). Idempotent. */
  release(): Promise<void>;
}

/** A key for a schema: its versions as the app registered them and the plugins that add tables. */
export function schemaKey(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
}

export function leaseDatabase(): DatabaseLease {
  let key: string | undefined;
  let attached: Promise<Pooled> | undefined;
  // An app that never queries (or a factory that brought its own database) opens no instance.
  const attach = () =>
    (attached ??= (async () => {
      if (key === undefined) throw new Error("The test database was queried before its schema was named");
      const reused = templates.has(key) ? idle.get(key)?.pop() : undefined;
      if (reused) clearTimeout(reused.expiry);
      return reused ?? { key, ...(await open(key)) };
    })());
  const client = async () => (await attach()).client;
  let releasing: Promise<void> | undefined;
  const release = () =>
    (releasing ??= (async () => {
      const pooled = await attached?.catch(() => undefined);
      if (pooled) await putBack(pooled);
    })());
  const database: DatabaseConfig = {
    dialect: reentrant(new PGliteDialect({ pglite: client, onDestroy: release })),
    kind: "postgres",
    // Like embedded()'s: one process writes, so live queries see every change without a listener.
    live: { kind: "pglite" },
    about: { engine: "embedded PostgreSQL (PGlite)", location: "memory:// (a copy of the migrated schema, for one test)" },
    close: release,
    probe: async () => void (await (await client()).exec("select 1")),
    backup: async () => backupEmbedded(await client()),
  };
  return {
    database,
    key: (name) => void (key = name),
    current: async () => (await attach()).migrated,
    async migrated() {
      const pooled = await attached;
      if (pooled && !templates.has(pooled.key)) templates.set(pooled.key, await record(pooled.client));
    },
    release,
  };
}

/** A new instance: from the schema's dump on disk when there is one (migrated), else from the plain template. */
async function open(key: string): Promise<{ client: EmbeddedClient; migrated: boolean }> {
  const path = await dumpPath(key);
  const dump = readCachedTemplate(path);
  const { client, started } = openInstance(MEMORY, SHARED_BUFFERS, dump);
  await started;
  if (dump && !templates.has(key)) templates.set(key, await record(client));
  else if (!dump && path) pendingDumps.add(key);
  return { client, migrated: Boolean(dump) };
}

/** Keys whose dump is not on disk yet: written when the first instance is released (idle, so it costs no test). */
const pendingDumps = new Set<string>();

async function putBack(pooled: Pooled): Promise<void> {
  const { client, key } = pooled;
  const template = templates.get(key);
  if (client.closed) return;
  try {
    if (!template) return void (await client.close());
    // Tables created since the template, and tables a test filled (their dead rows would slow every
    // later test's scans), are truncated; the rest have their rows deleted by the template's reset.
    const truncated: string[] = [];
    let kept = 0;
    for (const relation of await relationsOf(client)) {
      const before = template.relations.get(relation.name);
      if (!before) relation.table && truncated.push(relation.name);
      else if (before.columns === relation.columns) {
        kept++;
        if (relation.table && relation.bytes > FILLED_BYTES) truncated.push(relation.name);
      }
    }
    if (kept < template.relations.size) return void (await client.close());
    await client.exec(truncated.length > 0 ? `truncate ${truncated.join(", ")} restart identity cascade;\n${template.reset}` : template.reset);
    if (pendingDumps.delete(key)) await saveDump(key, client);
    const list = idle.get(key) ?? [];
    pooled.migrated = true;
    list.push(pooled);
    idle.set(key, list);
    pooled.expiry = setTimeout(() => {
      list.splice(list.indexOf(pooled), 1);
      void client.close().catch(() => {});
    }, IDLE_MS).unref();
  } catch {
    await client.close().catch(() => {});
  }
}

/** Every user table and sequence, with the rows the migrations left, as one statement that restores them. */
async function record(client: EmbeddedClient): Promise<Template> {
  const tables = (
    await client.query<{ name: string; columns: string[]; rows: number }>(`
      select format('%I.%I', n.nspname, c.relname) as name,
        array(select quote_ident(a.attname) from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = '' order by a.attnum) as columns,
        (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I.%I', n.nspname, c.relname), false, true, '')))[1]::text::int as rows
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and not c.relispartition and ${USER_SCHEMA}`)
  ).rows;
  // Rows are deleted, not truncated: a truncate gives every table new files, which costs PGlite's
  // in-memory file system four times what deleting a test's few rows does (21 against 5 ms for 30
  // tables). Foreign keys and triggers are off meanwhile (`replica`), so the order does not matter
  // and no trigger of the app's sees the reset. A table a test filled is truncated instead (putBack).
  const statements = ["set session_replication_role = replica"];
  for (const table of tables) statements.push(`delete from ${table.name}`);
  for (const table of tables.filter((table) => table.rows > 0)) {
    const { rows } = await client.query<{ data: string }>(`select coalesce(json_agg(t), '[]')::text as data from ${table.name} t`);
    const columns = table.columns.join(", ");
    statements.push(`insert into ${table.name} (${columns}) overriding system value select ${columns} from json_populate_recordset(null::${table.name}, ${literal(rows[0]!.data)})`);
  }
  const sequences = (await client.query<{ name: string; value: string | null; start: string }>(`
      select format('%I.%I', schemaname, sequencename) as name, last_value::text as value, start_value::text as start
      from pg_sequences where schemaname not in ('pg_catalog', 'information_schema')`)).rows;
  for (const sequence of sequences) {
    statements.push(`select setval(${literal(sequence.name)}, ${sequence.value ?? sequence.start}, ${sequence.value === null ? "false" : "true"})`);
  }
  statements.push("set session_replication_role = default");
  const relations = new Map((await relationsOf(client)).map((relation) => [relation.name, relation]));
  return { reset: statements.map((statement) => `${statement};`).join("\n"), relations };
}

const USER_SCHEMA = `n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%' and n.nspname not like 'pg_temp%'`;

async function relationsOf(client: EmbeddedClient): Promise<Relation[]> {
  const { rows } = await client.query<{ name: string; kind: string; partition: boolean; columns: string | null; bytes: number }>(`
    select format('%I.%I', n.nspname, c.relname) as name, c.relkind as kind, c.relispartition as partition,
      case when c.relkind = 'r' then pg_relation_size(c.oid)::float8 else 0 end as bytes,
      (select string_agg(a.attname || ':' || a.atttypid::text, ',' order by a.attnum) from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${USER_SCHEMA}`);
  return rows.map((row) => ({ name: row.name, table: (row.kind === "r" || row.kind === "p") && !row.partition, columns: row.columns ?? "", bytes: row.bytes }));
}

function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

async function dumpPath(key: string): Promise<string | undefined> {
  const plain = templateCachePath((await loadVector()) ? "vector" : "");
  return plain && join(dirname(plain), `${plain.split("/").pop()!.replace(/\.tar$/, "")}-app-${key}.tar`);
}

async function saveDump(key: string, client: EmbeddedClient): Promise<void> {
  const path = await dumpPath(key);
  if (!path) return;
  await writeCachedTemplate(path, await client.dumpDataDir("none"));
  // The newest few schemas stay; older dumps (schemas since changed) go.
  try {
    const dir = dirname(path);
    const dumps = readdirSync(dir)
      .filter((name) => name.includes("-app-") && name.endsWith(".tar"))
      .map((name) => ({ file: join(dir, name), at: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const old of dumps.slice(KEEP_ON_DISK)) unlinkSync(old.file);
  } catch {
    // Only a cache.
  }
}
