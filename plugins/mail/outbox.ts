import { sql } from "kysely";
import type { AppDatabase, DatabaseKind } from "../../kernel/index.js";

/**
 * The mail table: one row per message the app queued, whatever the transport, with its state, so
 * the outbox (development) and the delivery log (SMTP) are the same list. Created by the plugin
 * after every migration run (`if not exists`), outside the app's schema versions: it is the
 * plugin's own bookkeeping, like the migrator's table.
 */
export const MAIL_TABLE = "trellis_mail";

export type MailState = "queued" | "sent" | "failed";

export interface MailRow {
  id: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  link: string | null;
  transport: string;
  state: MailState;
  attempts: number;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface StoredRow {
  id: string;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  link: string | null;
  transport: string;
  state: string;
  attempts: number;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Idempotent. On PostgreSQL, replicas starting together would race on `create table if not
 * exists` (a duplicate catalog row), so it runs under a transaction-scoped advisory lock.
 */
export async function createMailTable(db: AppDatabase<any>, kind: DatabaseKind): Promise<void> {
  if (kind !== "postgres") return createIn(db);
  // Made already (every start after the first, a test's copy of a migrated database): one read
  // instead of a transaction of DDL. The index is made last, so it stands for both; it is looked for
  // where CREATE puts it, the connection's current schema (another on the search path does not count).
  const { rows } = await sql<{ made: boolean }>`select exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relname = ${`${MAIL_TABLE}_to_created`}) as made`.execute(db);
  if (rows[0]?.made) return;
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('trellis_mail'))`.execute(trx);
    await createIn(trx as unknown as AppDatabase<any>);
  });
}

async function createIn(db: AppDatabase<any>): Promise<void> {
  await db.schema
    .createTable(MAIL_TABLE)
    .ifNotExists()
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("to_address", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("text_body", "text", (c) => c.notNull())
    .addColumn("html_body", "text")
    .addColumn("link", "text")
    .addColumn("transport", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("error", "text")
    // ISO 8601 text: one representation that sorts the same on PostgreSQL and SQLite.
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex(`${MAIL_TABLE}_to_created`).ifNotExists().on(MAIL_TABLE).columns(["to_address", "created_at"]).execute();
}

export class MailRows {
  constructor(private readonly db: AppDatabase<any>) {}

  async insert(row: Omit<MailRow, "attempts" | "error" | "createdAt" | "updatedAt" | "state">): Promise<void> {
    const now = new Date().toISOString();
    await this.db
      .insertInto(MAIL_TABLE)
      .values({
        id: row.id,
        kind: row.kind,
        to_address: row.to.toLowerCase(),
        subject: row.subject,
        text_body: row.text,
        html_body: row.html,
        link: row.link,
        transport: row.transport,
        state: "queued",
        attempts: 0,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async settle(id: string, state: MailState, attempts: number, error: string | null): Promise<void> {
    await this.db.updateTable(MAIL_TABLE).set({ state, attempts, error, updated_at: new Date().toISOString() }).where("id", "=", id).execute();
  }

  async get(id: string): Promise<MailRow | undefined> {
    const row = await this.db.selectFrom(MAIL_TABLE).selectAll().where("id", "=", id).executeTakeFirst();
    return row ? fromStored(row as StoredRow) : undefined;
  }

  async list(filter: { to?: string; state?: MailState; take: number }): Promise<MailRow[]> {
    let query = this.db.selectFrom(MAIL_TABLE).selectAll();
    if (filter.to) query = query.where("to_address", "=", filter.to.toLowerCase());
    if (filter.state) query = query.where("state", "=", filter.state);
    const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(filter.take).execute();
    return (rows as StoredRow[]).map(fromStored);
  }
}

function fromStored(row: StoredRow): MailRow {
  return {
    id: row.id,
    kind: row.kind,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    link: row.link,
    transport: row.transport,
    state: row.state as MailState,
    attempts: Number(row.attempts),
    error: row.error,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
