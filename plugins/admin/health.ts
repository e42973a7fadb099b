import { sql } from "kysely";
import { within, type AppDatabase, type AppKV, type AppStorage } from "../../kernel/index.js";

export interface Probe {
  /** True when the service answered in time. */
  ok: boolean;
  /** How long the probe took, in milliseconds. */
  ms: number;
  /** Why it failed (the first line of the error, at most 200 characters). */
  error?: string;
}

export interface AdminHealth {
  database: Probe;
  /** `null` when the app has no key/value store (`kv`, Redis or memory). */
  kv: Probe | null;
  /** `null` when the app has no file storage. */
  storage: Probe | null;
}

const TIMEOUT_MS = 2_000;
/** A key no one writes: reading it proves the store answers, without touching real data. */
const PROBE_KEY = "trellis-admin-probe";

async function probe(run: () => Promise<unknown>): Promise<Probe> {
  const started = performance.now();
  try {
    await within(run(), TIMEOUT_MS, `no answer within ${TIMEOUT_MS} ms`);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = String((error as Error)?.message ?? error).split("\n")[0]!.slice(0, 200);
    return { ok: false, ms: Math.round(performance.now() - started), error: message };
  }
}

/** Database, key/value store and file storage: reachable or not, each within 2 seconds, in parallel. */
export async function checkHealth(db: AppDatabase<any>, kv: AppKV | undefined, storage: AppStorage | undefined): Promise<AdminHealth> {
  const [database, kvProbe, storageProbe] = await Promise.all([
    probe(() => sql`select 1`.execute(db)),
    kv ? probe(() => kv.hasItem(PROBE_KEY)) : null,
    storage ? probe(() => storage.get(PROBE_KEY)) : null,
  ]);
  return { database, kv: kvProbe, storage: storageProbe };
}
