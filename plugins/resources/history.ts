import { TrellisError } from "../../kernel/index.js";
import { RESOURCE_HISTORY_NOT_AUDITED } from "./errors.js";

/**
 * `{name}.history` (the `history` option): the audit log's entries of one row, to whoever may `get`
 * it. The entries come from the audit plugin's `audit-history` service; this is the part of it a
 * resource reads (that plugin owns the rest, and the entries' shape).
 */
export interface HistorySource {
  /** Whether the audit log records the table. */
  audits(table: string): boolean;
  /** The entries of one row's current life, newest first, `take` of them older than `cursor`. */
  row(table: string, key: string, page: { cursor?: string; take: number }): Promise<{ entries: unknown[]; nextCursor: string | null }>;
}

/** Entries per page when `take` is absent, and the most one page holds (as `_admin.audit.list`). */
export const HISTORY_TAKE = { default: 50, max: 200 } as const;

/** The source of the resources that keep a history, or the build's refusal naming the fix. */
export function historySource(source: HistorySource | undefined, resources: readonly string[]): HistorySource | undefined {
  for (const name of resources) {
    if (!source) {
      throw new TrellisError(RESOURCE_HISTORY_NOT_AUDITED, `Resource "${name}" has history: true, which reads the audit log: add .audit() to the app`, { plugin: "resources", hook: "build" });
    }
    if (!source.audits(name)) {
      throw new TrellisError(
        RESOURCE_HISTORY_NOT_AUDITED,
        `Resource "${name}" has history: true, but .audit() does not record table "${name}": take it out of exclude (or name it in tables)`,
        { plugin: "resources", hook: "build" },
      );
    }
  }
  return resources.length ? source : undefined;
}
