import type { Dialect } from "kysely";
import { PGliteDialect } from "../../kernel/db/dialect/pglite.js";
import { reentrant } from "../../kernel/db/dialect/reentrant.js";
import { loadVector } from "../../kernel/embedded/extensions.js";
import { MEMORY, openInstance, type EmbeddedClient } from "../../kernel/embedded/instance.js";
import { within } from "./within.js";

/**
 * Empty in-memory PGlite databases for tests, reused within a test file. Starting an instance
 * costs 0.5 to 0.8 s of CPU (a thread, the WebAssembly instance, the template loaded); emptying
 * one a test has finished with (every object it created dropped, the session discarded) costs
 * 20 to 50 ms. A database is handed out as empty as a new one: the `vector` extension and
 * nothing else. Each hand-out is its own view of the instance: its own prepared statements, and
 * closed for good once released (a late query fails as on a closed instance, never reaching the
 * next test's database).
 */
const idle: { client: EmbeddedClient; expiry: NodeJS.Timeout }[] = [];
/** An idle instance is closed after this long, so a test process that is done can exit. */
const IDLE_MS = 2_000;

export interface ReusedPglite {
  dialect: Dialect;
  /** Empties the instance and keeps it for the next test; idempotent, and run by destroying a Kysely over `dialect`. */
  close(): Promise<void>;
}

export async function reusedPglite(): Promise<ReusedPglite> {
  const kept = idle.pop();
  if (kept) clearTimeout(kept.expiry);
  const client = kept?.client ?? (await opened());
  let releasing: Promise<void> | undefined;
  const view = viewOf(client, () => releasing !== undefined);
  const close = () => (releasing ??= putBack(client));
  return { dialect: reentrant(new PGliteDialect({ pglite: view, onDestroy: close })), close };
}

async function opened(): Promise<EmbeddedClient> {
  const { client, started } = openInstance(MEMORY, "16MB");
  await started;
  return client;
}

/** The instance as one lease sees it: closed once released. A fresh object, so PGlite's prepared statements (kept per object) start empty. */
function viewOf(client: EmbeddedClient, released: () => boolean): EmbeddedClient {
  return new Proxy(client, {
    get(target, key) {
      if (key === "closed") return released() || target.closed;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "close") return () => Promise.resolve();
      return (...args: unknown[]) => {
        if (released()) throw new Error("PGlite is closed");
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

async function putBack(client: EmbeddedClient): Promise<void> {
  if (client.closed) return;
  try {
    await within(empty(client), 10_000, "emptying a test's PGlite database");
  } catch {
    // A transaction left open, a broken instance: not reused.
    void client.close().catch(() => {});
    return;
  }
  const entry = {
    client,
    expiry: setTimeout(() => {
      idle.splice(idle.indexOf(entry), 1);
      void client.close().catch(() => {});
    }, IDLE_MS).unref(),
  };
  idle.push(entry);
}

/** Everything a test may have made, outside what the extensions own: schemas, and in `public` relations, types and functions. */
const MADE = `
  select 'schema' as kind, quote_ident(nspname) as name from pg_namespace
    where nspname not in ('public', 'pg_catalog', 'information_schema') and nspname not like 'pg\\_%'
  union all
  select case c.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'S' then 'sequence' when 'f' then 'foreign table' else 'table' end, format('public.%I', c.relname)
    from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
    and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
  union all
  select case t.typtype when 'd' then 'domain' else 'type' end, format('public.%I', t.typname)
    from pg_type t where t.typnamespace = 'public'::regnamespace and t.typtype in ('e', 'd', 'r', 'm')
    and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
  union all
  select case p.prokind when 'p' then 'procedure' when 'a' then 'aggregate' else 'function' end, p.oid::regprocedure::text
    from pg_proc p where p.pronamespace = 'public'::regnamespace
    and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;

async function empty(client: EmbeddedClient): Promise<void> {
  // Settings, prepared statements, temporary tables, advisory locks and listeners of the session go.
  await client.exec("discard all");
  const { rows } = await client.query<{ kind: string; name: string }>(MADE);
  const drops = rows.map((row) => `drop ${row.kind} if exists ${row.name} cascade;`);
  // What openInstance sets on a new instance, which `discard all` reset.
  if (await loadVector()) drops.push("set hnsw.iterative_scan = relaxed_order");
  if (drops.length > 0) await client.exec(drops.join("\n"));
}
