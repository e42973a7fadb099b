import { sql, type Kysely } from "kysely";
import type { DatabaseKind } from "../../kernel/index.js";

/** Where entries live: one table in the app's database, written by triggers. */
export const AUDIT_TABLE = "trellis_audit";
/** SQLite only: the one row holding the writer (PostgreSQL keeps it in the `trellis.audit` setting). */
export const CONTEXT_TABLE = "trellis_audit_context";

/**
 * `at` is ISO 8601 UTC text with milliseconds on both families: one representation that sorts as
 * time and compares the same on PostgreSQL and SQLite. `id` orders entries (cursor pages).
 */
export async function createAuditTable(db: Kysely<any>, kind: DatabaseKind): Promise<void> {
  const json = kind === "postgres" ? "jsonb" : "text";
  const id = kind === "postgres" ? sql`bigserial primary key` : sql`integer primary key autoincrement`;
  await sql`create table if not exists ${sql.table(AUDIT_TABLE)} (
    id ${id},
    at text not null,
    table_name text not null,
    op text not null,
    row_key text,
    before ${sql.raw(json)},
    after ${sql.raw(json)},
    changed ${sql.raw(json)} not null,
    actor_kind text not null,
    actor_id text,
    impersonator_id text,
    request_id text,
    source text,
    job text,
    organization_id text
  )`.execute(db);
  await sql`create index if not exists ${sql.id(`${AUDIT_TABLE}_row`)} on ${sql.table(AUDIT_TABLE)} (table_name, row_key, id)`.execute(db);
  // No index by actor: every index is one more insert in each audited write, and the actor filter
  // (`actor_id` or `impersonator_id`) could not use a one-column index anyway; it walks the primary
  // key newest first and stops at a page. Earlier versions created one: dropped here.
  await sql`drop index if exists ${sql.id(`${AUDIT_TABLE}_actor`)}`.execute(db);
  // Entries arrive in time order, so on PostgreSQL a BRIN index (a few pages, next to nothing per
  // write) serves the retention sweep and time filters; SQLite has only B-trees.
  const at = kind === "postgres" ? sql`using brin (at)` : sql`(at)`;
  await sql`create index if not exists ${sql.id(`${AUDIT_TABLE}_at`)} on ${sql.table(AUDIT_TABLE)} ${at}`.execute(db);
  if (kind === "sqlite") await sql`create table if not exists ${sql.table(CONTEXT_TABLE)} (id integer primary key, actor text)`.execute(db);
}
