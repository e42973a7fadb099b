import { unwrap } from "./carried.js";
import type { EngineDb } from "./engine-db.js";
import type { Definition } from "./registry.js";
import type { JobRecord, JobState, QueueInfo, StateCounts } from "./types.js";

export const STATES: readonly JobState[] = ["created", "retry", "active", "completed", "cancelled", "failed"];

/** Reads pg-boss's job table for the admin API and `jobs.get/list`: the engine's own API has no listing. */
export class JobTable {
  constructor(
    private readonly db: EngineDb,
    private readonly schema: string,
  ) {}

  async get(queue: string, id: string): Promise<JobRecord | null> {
    if (!UUID.test(id)) return null;
    const { rows } = await this.db.executeSql(`${SELECT} from ${this.schema}.job where name = $1 and id = $2::uuid`, [queue, id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(options: { queue?: string; state?: JobState; take: number; skip: number }): Promise<JobRecord[]> {
    const { rows } = await this.db.executeSql(
      `${SELECT} from ${this.schema}.job
       where name not like '\\_\\_pgboss%' and ($1::text is null or name = $1) and ($2::text is null or state::text = $2)
       order by created_on desc, id limit $3 offset $4`,
      [options.queue ?? null, options.state ?? null, options.take, options.skip],
    );
    return rows.map(toRecord);
  }

  /** Counts by queue and state, zeros included. */
  async counts(queues: readonly string[]): Promise<Map<string, StateCounts>> {
    const { rows } = await this.db.executeSql(`select name, state::text as state, count(*)::int as size from ${this.schema}.job where name = any($1::text[]) group by name, state`, [queues]);
    const out = new Map(queues.map((queue) => [queue, zeros()]));
    for (const row of rows) {
      const counts = out.get(row.name);
      if (counts) counts[row.state as JobState] = Number(row.size);
    }
    return out;
  }
}

/** Every defined kind with its counts by state. */
export async function queueInfos(definitions: readonly Definition[], table: JobTable): Promise<QueueInfo[]> {
  const counts = await table.counts(definitions.map(({ name }) => name));
  return definitions.map((definition) => ({
    name: definition.name,
    kind: definition.kind,
    owner: definition.owner,
    cron: definition.cron?.expression ?? null,
    tz: definition.cron?.tz ?? null,
    retry: definition.policy.retryLimit,
    counts: counts.get(definition.name) ?? zeros(),
  }));
}

export function totals(queues: readonly QueueInfo[]): StateCounts {
  const total = zeros();
  for (const queue of queues) for (const state of STATES) total[state] += queue.counts[state];
  return total;
}

/** Queue names and schedules, without the database (the start banner). */
export function describeDefinitions(definitions: readonly Definition[]): { queues: string[]; schedules: { name: string; cron: string; tz: string }[] } {
  return {
    queues: definitions.map(({ name }) => name),
    schedules: definitions.flatMap(({ name, cron }) => (cron ? [{ name, cron: cron.expression, tz: cron.tz }] : [])),
  };
}

export function zeros(): StateCounts {
  return { created: 0, retry: 0, active: 0, completed: 0, cancelled: 0, failed: 0 };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const SELECT = `select id, name, state::text as state, data, output, priority, retry_count, retry_limit, singleton_key,
  created_on, start_after, started_on, completed_on`;

function toRecord(row: any): JobRecord {
  const state = row.state as JobState;
  const output = typeof row.output === "string" ? safeParse(row.output) : row.output;
  const failedOutput = state === "failed" || state === "retry";
  const stored = unwrap(row.data ?? null);
  return {
    id: row.id,
    queue: row.name,
    state,
    data: stored.data ?? null,
    organizationId: stored.carried?.organizationId ?? null,
    attempts: row.started_on ? Number(row.retry_count) + 1 : 0,
    maxAttempts: Number(row.retry_limit) + 1,
    error: failedOutput ? messageOf(output) : null,
    output: failedOutput ? null : (output ?? null),
    priority: Number(row.priority),
    singletonKey: row.singleton_key ?? null,
    createdAt: toDate(row.created_on)!,
    startAfter: toDate(row.start_after)!,
    startedAt: toDate(row.started_on),
    completedAt: toDate(row.completed_on),
  };
}

function messageOf(output: unknown): string | null {
  if (output && typeof output === "object") {
    const value = output as { message?: unknown; value?: unknown };
    if (typeof value.message === "string") return value.message;
    if (value.value && typeof value.value === "object" && typeof (value.value as { message?: unknown }).message === "string") return (value.value as { message: string }).message;
    if (typeof value.value === "string") return value.value;
  }
  return output == null ? null : String(output);
}

function toDate(value: unknown): Date | null {
  if (value == null) return null;
  return value instanceof Date ? value : new Date(String(value));
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
