import type { Kysely } from "kysely";
import type { DatabaseKind } from "../../kernel/index.js";
import { AUDIT_TABLE } from "./table.js";

/** One recorded change, as the admin API returns it. */
export interface AuditEntry {
  /** Orders entries; a string, as the column is 64-bit on PostgreSQL. */
  id: string;
  /** When the change was made (ISO 8601, UTC). */
  at: string;
  table: string;
  op: "insert" | "update" | "delete";
  /** The row's primary key, as text; null for a table without one. */
  key: string | null;
  actor: {
    kind: "user" | "apiKey" | "job" | "anonymous" | "system";
    userId: string | null;
    impersonatorId: string | null;
  };
  requestId: string | null;
  /** `rpc`, `rest`, `mcp`, `admin`, `auth`, `route`, `job`; null for the system. */
  source: string | null;
  job: string | null;
  organizationId: string | null;
  /** The columns the change set (every column of an insert or a delete), in the row's order. */
  changed: string[];
  /** The row before (null for an insert) and after (null for a delete); secret values read `[redacted]`. */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface EntryFilter {
  table?: string;
  key?: string;
  /** A user id: the changes that user made (or made while impersonated). */
  actor?: string;
  actorKind?: AuditEntry["actor"]["kind"];
  op?: AuditEntry["op"];
  /** Inclusive bounds on `at`. */
  from?: Date;
  to?: Date;
  /** Entries older than this one (the previous page's `nextCursor`). */
  cursor?: string;
}

interface StoredEntry {
  id: string | number;
  at: string;
  table_name: string;
  op: AuditEntry["op"];
  row_key: string | null;
  before: unknown;
  after: unknown;
  changed: unknown;
  actor_kind: AuditEntry["actor"]["kind"];
  actor_id: string | null;
  impersonator_id: string | null;
  request_id: string | null;
  source: string | null;
  job: string | null;
  organization_id: string | null;
}

/** Reads entries newest first. JSON columns are text on SQLite and parsed by the driver on PostgreSQL. */
export class AuditEntries {
  constructor(
    private readonly db: Kysely<any>,
    private readonly kind: DatabaseKind,
  ) {}

  async page(filter: EntryFilter, take: number): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
    return this.#paged(await this.#select(filter, take + 1), take);
  }

  /**
   * The entries of one row's current life, newest first: those since its latest insert (all of them
   * when the log holds none, such as a row older than the log). A key deleted and inserted again
   * names another row, whose earlier entries are not this one's.
   */
  async row(table: string, key: string, cursor: string | undefined, take: number): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
    let query = this.db
      .selectFrom(AUDIT_TABLE)
      .selectAll()
      .where("table_name", "=", table)
      .where("row_key", "=", key)
      // The latest insert, found walking the row's index backwards; 0 when there is none.
      .where((eb) =>
        eb(
          "id",
          ">=",
          eb.fn.coalesce(
            eb.selectFrom(AUDIT_TABLE).select("id").where("table_name", "=", table).where("row_key", "=", key).where("op", "=", "insert").orderBy("id", "desc").limit(1),
            eb.lit(0),
          ),
        ),
      );
    if (cursor !== undefined) query = query.where("id", "<", this.#id(cursor));
    return this.#paged((await query.orderBy("id", "desc").limit(take + 1).execute()) as StoredEntry[], take);
  }

  async get(id: string): Promise<AuditEntry | undefined> {
    const row = await this.db.selectFrom(AUDIT_TABLE).selectAll().where("id", "=", this.#id(id)).executeTakeFirst();
    return row ? this.#decode(row as StoredEntry) : undefined;
  }

  /** Deletes entries written before `before`; how many. */
  async deleteBefore(before: Date): Promise<number> {
    const result = await this.db.deleteFrom(AUDIT_TABLE).where("at", "<", before.toISOString()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  #select(filter: EntryFilter, limit: number): Promise<StoredEntry[]> {
    let query = this.db.selectFrom(AUDIT_TABLE).selectAll();
    if (filter.table !== undefined) query = query.where("table_name", "=", filter.table);
    if (filter.key !== undefined) query = query.where("row_key", "=", filter.key);
    if (filter.actor !== undefined) query = query.where((eb) => eb.or([eb("actor_id", "=", filter.actor!), eb("impersonator_id", "=", filter.actor!)]));
    if (filter.actorKind !== undefined) query = query.where("actor_kind", "=", filter.actorKind);
    if (filter.op !== undefined) query = query.where("op", "=", filter.op);
    if (filter.from !== undefined) query = query.where("at", ">=", filter.from.toISOString());
    if (filter.to !== undefined) query = query.where("at", "<=", filter.to.toISOString());
    if (filter.cursor !== undefined) query = query.where("id", "<", this.#id(filter.cursor));
    return query.orderBy("id", "desc").limit(limit).execute() as Promise<StoredEntry[]>;
  }

  /** `take` entries of `rows` (read with one more, which tells whether a next page exists). */
  #paged(rows: StoredEntry[], take: number): { entries: AuditEntry[]; nextCursor: string | null } {
    const entries = rows.slice(0, take).map((row) => this.#decode(row));
    return { entries, nextCursor: rows.length > take ? entries.at(-1)!.id : null };
  }

  /** PostgreSQL's bigserial compares with a string parameter; SQLite's integer key wants a number. */
  #id(id: string): string | number {
    return this.kind === "sqlite" ? Number(id) : id;
  }

  #decode(row: StoredEntry): AuditEntry {
    const json = (value: unknown) => (typeof value === "string" && this.kind === "sqlite" ? JSON.parse(value) : value);
    const before = (json(row.before) as Record<string, unknown> | null) ?? null;
    const after = (json(row.after) as Record<string, unknown> | null) ?? null;
    return {
      id: String(row.id),
      at: row.at,
      table: row.table_name,
      op: row.op,
      key: row.row_key,
      actor: { kind: row.actor_kind, userId: row.actor_id, impersonatorId: row.impersonator_id },
      requestId: row.request_id,
      source: row.source,
      job: row.job,
      organizationId: row.organization_id,
      changed: changedColumns(before, after, (json(row.changed) as string[] | null) ?? []),
      before,
      after,
    };
  }
}

/**
 * Every column of an insert or a delete; for an update, those whose values differ, plus the secret
 * ones the trigger saw change (their values both read `[redacted]`). In the row's column order.
 */
function changedColumns(before: Record<string, unknown> | null, after: Record<string, unknown> | null, noted: readonly string[]): string[] {
  if (!before || !after) return Object.keys(after ?? before ?? {});
  return Object.keys(after).filter((column) => noted.includes(column) || JSON.stringify(before[column]) !== JSON.stringify(after[column]));
}
