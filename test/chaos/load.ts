// Steady mixed load over HTTP for the chaos cases: each worker alternates a write (RPC create) and
// a read (REST list), records every status, and keeps the ids of the writes that were acknowledged
// (a 200 with the row), so a test can check none of them was lost.
export interface LoadReport {
  statuses: Record<number, number>;
  /** Ids the server acknowledged. */
  acknowledged: number[];
  /** Bodies of answers that were neither 200 nor 503 (what a test prints when it fails). */
  unexpected: string[];
  /** Longest time a 503 took to arrive, in ms. */
  slowest503: number;
  /** 503 messages seen, once each. */
  messages: Set<string>;
}

export interface Load {
  /** What has been seen so far. */
  readonly report: LoadReport;
  stop(): Promise<LoadReport>;
}

export interface LoadOptions {
  workers?: number;
  table?: string;
  /** Pause between a worker's requests, in ms. */
  pauseMs?: number;
  /** Headers on every request (a session cookie). */
  headers?: Record<string, string>;
  /** How the read goes: a REST list (default, needs `.openapi()`) or the RPC list. */
  read?: "rest" | "rpc";
  /** The row each write creates (default `{ body }`). */
  row?: (sequence: number) => Record<string, unknown>;
}

export function steadyLoad(baseUrl: string, options: LoadOptions = {}): Load {
  const table = options.table ?? "note";
  const report: LoadReport = { statuses: {}, acknowledged: [], unexpected: [], slowest503: 0, messages: new Set() };
  let running = true;
  let sequence = 0;
  const record = async (response: Response, started: number) => {
    report.statuses[response.status] = (report.statuses[response.status] ?? 0) + 1;
    const text = await response.text();
    if (response.status === 503) {
      report.slowest503 = Math.max(report.slowest503, Date.now() - started);
      const body = JSON.parse(text);
      report.messages.add(body.json?.message ?? body.message);
    } else if (response.status !== 200) report.unexpected.push(`${response.status} ${text}`);
    return text;
  };
  const worker = async () => {
    while (running) {
      const started = Date.now();
      try {
        const n = sequence++;
        const row = options.row ? options.row(n) : { body: `load ${n}` };
        const created = await fetch(`${baseUrl}/rpc/${table}/create`, { method: "POST", headers: { ...options.headers, "content-type": "application/json" }, body: JSON.stringify({ json: row }) });
        const text = await record(created, started);
        if (created.status === 200) report.acknowledged.push(JSON.parse(text).json.id);
        const listed =
          options.read === "rpc"
            ? await fetch(`${baseUrl}/rpc/${table}/list`, { method: "POST", headers: { ...options.headers, "content-type": "application/json" }, body: JSON.stringify({ json: { take: 5 } }) })
            : await fetch(`${baseUrl}/rest/${table}?take=5`, { headers: options.headers });
        await record(listed, Date.now());
      } catch (error) {
        report.unexpected.push(`fetch failed: ${(error as Error).message}`);
      }
      if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  };
  const workers = Array.from({ length: options.workers ?? 3 }, worker);
  return {
    report,
    async stop() {
      running = false;
      await Promise.all(workers);
      return report;
    },
  };
}

/** Polls until `check` passes or `ms` elapse; returns how long it took. */
export async function waitUntil(check: () => Promise<boolean> | boolean, ms = 10_000, what = "the condition"): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not hold within ${ms} ms`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
