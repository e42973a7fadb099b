// Writers that insert rows through `app.handle` while something else runs (a backup), recording
// every id the app acknowledged: the backup tests check the restored database holds each one
// acknowledged before the backup began.
type Handler = { handle(request: Request): Promise<Response> };

export interface UnderLoad<T> {
  /** Ids acknowledged (200 answered) before `during` was called. */
  before: number[];
  /** How many were acknowledged while it ran. */
  during: number;
  result: T;
  tookMs: number;
}

/** `writers` loops creating `note` rows; once `warmUp` are acknowledged, runs `during` under that load. */
export async function underWriteLoad<T>(app: Handler, during: () => Promise<T>, { writers = 3, warmUp = 100 } = {}): Promise<UnderLoad<T>> {
  const acknowledged: number[] = [];
  let running = true;
  const writer = async () => {
    while (running) {
      const response = await app.handle(new Request("http://localhost/rpc/note/create", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { body: "x".repeat(200) } }) }));
      const body = await response.json();
      if (response.status !== 200) throw new Error(`create answered ${response.status}: ${JSON.stringify(body)}`);
      acknowledged.push(body.json.id);
      // In-memory queries can settle without a macrotask: yield, or the timers below never run.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const all = Array.from({ length: writers }, writer);
  const failed = Promise.all(all).then(() => "stopped", (error) => error);
  try {
    while (acknowledged.length < warmUp) {
      const outcome = await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 10))]);
      if (outcome) throw outcome;
    }
    const before = [...acknowledged];
    const started = Date.now();
    const result = await during();
    const tookMs = Date.now() - started;
    return { before, during: acknowledged.length - before.length, result, tookMs };
  } finally {
    running = false;
    await Promise.allSettled(all);
  }
}
