import { describe, expect, it } from "vitest";
import { sql } from "kysely";
import { embedded } from "../../kernel/embedded/index.js";
import { App } from "../../presets/trellis.js";
import { sleep, waitFor } from "./support.js";

describe("jobs and the app's lifetime (embedded)", () => {
  it("close() waits for a running handler; past the grace period it aborts it; app queries are not starved by polling workers", async () => {
    const events: string[] = [];
    let aborted = false;
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

    const latencies: number[] = [];
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      await sql`select 1`.execute(built.db);
      latencies.push(performance.now() - started);
      await sleep(10);
    }
    latencies.sort((a, b) => a - b);
    // The median stays a plain query's (well under a millisecond when idle; generous for a busy CI
    // machine): polls hold the connection for one short statement each.
    expect(latencies[Math.floor(latencies.length / 2)]).toBeLessThan(25);

    await jobs.send("finishing", {});
    await waitFor("the handler to start", () => events.includes("started"));
    await built.close();
    expect(events).toEqual(["started", "finished"]);

    const short = new App({ db: embedded({ dataDir: "memory://" }), onError: () => undefined })
      .jobs({ pollingInterval: 0.5, shutdownTimeout: 1 })
      .job("endless", {}, async ({ signal }) => {
        events.push("endless");
        await new Promise((resolve) => signal.addEventListener("abort", () => resolve((aborted = true))));
      })
      .build();
    await short.sealed.ready();
    await short.sealed.service("jobs")!.send("endless", {});
    await waitFor("the endless handler", () => events.includes("endless"));
    const closing = performance.now();
    await short.close();
    expect(performance.now() - closing).toBeLessThan(4000);
    expect(aborted).toBe(true);
  }, 60_000);
});
