import { TrellisError, definePlugin, runInRequest, useWriteSetting, type AppPlugin, type HttpMiddleware, type PluginContext } from "../../kernel/index.js";
import { CompiledQuery } from "kysely";
import { currentActor } from "./actor.js";
import { auditAdminSection } from "./admin.js";
import { AuditEntries, type AuditEntry } from "./entries.js";
import { AUDIT_BAD_RETAIN, AUDIT_UNKNOWN_TABLE } from "./errors.js";
import { auditedTables, parseRetain, type AuditConfig } from "./options.js";
import { RETAIN_CRON, RETAIN_JOB, sweep, sweepHourly } from "./retention.js";
import { CONTEXT_TABLE, createAuditTable } from "./table.js";
import { installPostgresTriggers } from "./triggers-postgres.js";
import { installSqliteTriggers } from "./triggers-sqlite.js";

export type { AuditConfig } from "./options.js";
export type { AuditEntry, EntryFilter } from "./entries.js";
export type { AdminAuditRouter } from "./admin.js";
export type { AuditActor } from "./actor.js";
export { RETAIN_JOB } from "./retention.js";

/** What `context.audit` offers. */
export interface AuditService {
  /** Deletes the entries older than `retain` now (what the hourly sweep does); how many. 0 without `retain`. */
  sweep(): Promise<number>;
}

/**
 * A row's history, for other plugins (a resource's `history` option reads it): the service
 * `audit-history`. `audits` says whether a table is recorded; `row` pages the entries of one row's
 * current life (since its latest insert) newest first, as `_admin.audit.list` shapes them.
 */
export interface AuditHistory {
  audits(table: string): boolean;
  row(table: string, key: string, page: { cursor?: string; take: number }): Promise<{ entries: AuditEntry[]; nextCursor: string | null }>;
}

declare module "../../kernel/index.js" {
  interface AppServices {
    audit: AuditService;
    "audit-history": AuditHistory;
  }
}

interface JobsLike {
  cron(name: string, expression: string, handler: () => Promise<unknown>, options?: Record<string, unknown>): void;
}

/**
 * The audit log: every insert, update and delete on the audited tables, whoever made it and through
 * whatever surface (RPC, REST, MCP, `_admin`, batches, jobs, `context.db`, raw SQL), recorded by
 * database triggers in the writing transaction: an entry exists exactly when its change commits.
 * The writer reaches the triggers through a setting the database layer sends before each write
 * (`useWriteSetting`), read from the request or job run in scope (this plugin's middleware enters
 * it for every request; the jobs plugin for every run). Stage `feature`, before admin (which mounts
 * `_admin.audit.*`) and after jobs (where the retention sweep is scheduled).
 */
export function auditPlugin(config: AuditConfig = {}): AppPlugin {
  const retainMs = config.retain === undefined ? undefined : parseRetain(config.retain);
  return definePlugin({
    name: "audit",
    stage: "feature",
    optionalDependencies: ["jobs", "telemetry"],
    provides: ["audit", "audit-history", "admin-section:audit"],
    validate(ctx) {
      if (config.retain !== undefined && retainMs === undefined) {
        throw new TrellisError(AUDIT_BAD_RETAIN, `.audit({ retain: ${JSON.stringify(config.retain)} }): write a whole number and a unit, d, h or m (such as "90d")`, { plugin: "audit", hook: "validate" });
      }
      const { unknown } = auditedTables(ctx.schema, config);
      if (unknown.length) {
        throw new TrellisError(AUDIT_UNKNOWN_TABLE, `.audit(): no table named ${unknown.map((name) => `"${name}"`).join(", ")} in the latest schema`, { plugin: "audit", hook: "validate" });
      }
    },
    build(ctx) {
      const { db, kind } = ctx.resources;
      const { tables } = auditedTables(ctx.schema, config);
      const entries = new AuditEntries(db, kind);
      ctx.hooks.migrated.tap(async () => {
        await createAuditTable(db, kind);
        if (kind === "postgres") await installPostgresTriggers(db, ctx.schema, tables);
        else await installSqliteTriggers(db, ctx.schema, tables);
        // From here on (SQLite's context table exists), every write tells the triggers who makes it.
        useWriteSetting(db, {
          current: currentActor,
          inline: kind === "postgres" ? (placeholder) => `set_config('trellis.audit', ${placeholder}, true)` : undefined,
          statement:
            kind === "postgres"
              ? (value) => CompiledQuery.raw("select set_config('trellis.audit', $1, false)", [value])
              : (value) => CompiledQuery.raw(`insert into "${CONTEXT_TABLE}" (id, actor) values (1, nullif(?, '')) on conflict (id) do update set actor = excluded.actor`, [value]),
        });
      });
      // The dialect may outlive this app (handed to the next one): it stops sending the setting.
      ctx.hooks.close.tap(async () => void useWriteSetting(db, undefined));
      const run = () => (retainMs === undefined ? Promise.resolve(0) : sweep(entries, retainMs));
      ctx.provide("audit", { sweep: run }, { context: true });
      if (retainMs !== undefined) schedule(ctx, run);
      const audited = new Set(tables.map((table) => table.name));
      countEntries(ctx, audited);
      ctx.provide("audit-history", { audits: (table) => audited.has(table), row: (table, key, page) => entries.row(table, key, page.cursor, page.take) } satisfies AuditHistory);
      ctx.provide("admin-section:audit", auditAdminSection({ db, kind, schema: ctx.schema, entries, audited }));
      const scope: HttpMiddleware = (event, next) => runInRequest(event, next);
      scope.displayName = "audit:writer";
      // Preflights and HEAD requests write nothing.
      scope.passes = (event) => event.method === "OPTIONS" || event.method === "HEAD";
      return { middleware: [scope] };
    },
  });
}

/** The sweep: a cron job through the jobs plugin (once per tick across replicas), else a sweep at start and a timer here. */
function schedule(ctx: PluginContext, run: () => Promise<number>): void {
  const jobs = ctx.want("jobs") as JobsLike | undefined;
  if (jobs) return jobs.cron(RETAIN_JOB, RETAIN_CRON, run);
  let stop = () => {};
  const report = (error: unknown) => ctx.report(error, "job");
  ctx.hooks.ready.tap(async () => {
    stop = sweepHourly(run, report);
  });
  // The first sweep once the table surely exists (after this start's migrations), not at `ready`.
  ctx.hooks.migrated.tap(async () => void run().catch(report));
  ctx.hooks.close.tap(async () => stop());
}

/**
 * `trellis_audit_entries_total`, by table and operation, counted from the committed changes this
 * process made to audited tables (a statement that changed rows without naming them counts once).
 */
function countEntries(ctx: PluginContext, audited: ReadonlySet<string>): void {
  const telemetry = ctx.want("telemetry");
  if (!telemetry?.registry) return;
  const counter = telemetry.counter({ name: "trellis_audit_entries_total", help: "Audit log entries written, by table and operation", labelNames: ["table", "op"] });
  ctx.hooks.changed.tap((change) => {
    if (audited.has(change.table)) counter.inc({ table: change.table, op: change.op }, change.keys?.length ?? 1);
  });
}
