import { describe, expect, it } from "vitest";
import { Kysely, sql } from "kysely";
import { embedded } from "../../kernel/embedded/index.js";
import { App } from "../../presets/trellis.js";
import { within } from "../support/within.js";
import { sleep, waitFor } from "./support.js";

describe("jobs and the app's lifetime (embedded)", () => {
  it("close() waits for a running handler; past the grace period it aborts it; app queries are not starved by polling workers", async () => {
    const events: string[] = [];
    let abortedAt: number | undefined;
    let app = new App({ db: embedded({ dataDir: "memory://" }), onError: () => undefined }).jobs({ pollingInterval: 0.5, shutdownTimeout: 5 });
    // Twenty idle queues polling every half second share the one embedded connection with the app.
    for (let i = 0; i < 20; i++) app = app.job(`idle-${i}`, {}, () => undefined);
    const built = await app
      .job("finishing", {}, async () => {
        events.push("started");
        await sleep(700);
        events.push("finished");
      })
      .build();
    await built.sealed.ready();
    const jobs = built.sealed.service("jobs")!;
    // The same query on an embedded database no queue polls, timed alongside: what the machine's
    // load alone costs a statement at this moment.
    const quiet = embedded({ dataDir: "memory://" });
    const quietDb = new Kysely<any>({ dialect: quiet.dialect });

    const timed = async (db: Kysely<any>) => {
      const started = performance.now();
      await sql`select 1`.execute(db);
      return performance.now() - started;
    };
    const latencies: number[] = [];
    const baseline: number[] = [];
    try {
      await sql`select 1`.execute(quietDb);
      for (let i = 0; i < 100; i++) {
        latencies.push(await timed(built.db));
        baseline.push(await timed(quietDb));
        await sleep(10);
      }
    } finally {
      await within(quietDb.destroy(), 20_000, "closing the embedded database without queues");
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    // The median stays a plain query's (well under a millisecond when idle): polls hold the
    // connection for one short statement each. On a busy machine every statement is slower, so the
    // limit grows with the same query's median on the database nothing polls.
    expect(median(latencies)).toBeLessThan(Math.max(25, 4 * median(baseline)));

    await jobs.send("finishing", {});
    await waitFor("the handler to start", () => events.includes("started"));
    await within(built.close(), 20_000, "close() with a running handler");
    expect(events).toEqual(["started", "finished"]);

    const short = new App({ db: embedded({ dataDir: "memory://" }), onError: () => undefined })
      .jobs({ pollingInterval: 0.5, shutdownTimeout: 1 })
      .job("endless", {}, async ({ signal }) => {
        events.push("endless");
        await new Promise((resolve) => signal.addEventListener("abort", () => resolve((abortedAt = performance.now()))));
      })
      .build();
    await short.sealed.ready();
    await short.sealed.service("jobs")!.send("endless", {});
    await waitFor("the endless handler", () => events.includes("endless"));
    const closing = performance.now();
    await within(short.close(), 20_000, "close() with a handler that ends only when aborted");
    // Aborted once the grace period (1 s) is over: not before it, and not long after (the handler
    // would otherwise hold close() forever). Timed at the abort, not at the end of close(), which
    // also closes the database.
    expect(abortedAt).toBeDefined();
    expect(abortedAt! - closing).toBeGreaterThanOrEqual(900);
    expect(abortedAt! - closing).toBeLessThan(4000);
  }, 60_000);
});
