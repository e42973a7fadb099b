import { describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { App } from "../../presets/trellis.js";
import { sleep, waitFor } from "../jobs/support.js";

/**
 * `concurrency` is the number of handlers of a kind running at once, but the worker fetched a batch
 * of that many jobs and fetched the next only when the whole batch was over: one slow job (a webhook
 * receiver that never answers, until its timeout) held every other slot empty while jobs waited.
 */
describe("a slow job of a kind with concurrency 2", () => {
  it("does not hold back the kind's other jobs", async () => {
    const done: string[] = [];
    const built: any = await new App({ db: embedded({ dataDir: "memory://" }), onError: () => undefined })
      .jobs({ pollingInterval: 0.5, shutdownTimeout: 1 })
      .job("deliver", { concurrency: 2 }, async ({ data, signal }) => {
        const { name } = data as { name: string };
        if (name === "slow") await new Promise((resolve) => signal.addEventListener("abort", resolve));
        else await sleep(50);
        done.push(name);
      })
      .build();
    await built.sealed.ready();
    const jobs = built.sealed.service("jobs");
    await jobs.send("deliver", { name: "slow" });
    for (const name of ["a", "b", "c", "d", "e", "f"]) await jobs.send("deliver", { name });
    const started = Date.now();
    // The other slot keeps working while the slow job runs.
    await waitFor("the quick jobs", () => done.length === 6, 8_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(done).toEqual(["a", "b", "c", "d", "e", "f"]);
    // The slow one is aborted once the grace period is over, and close() returns.
    const closing = Date.now();
    await built.close();
    expect(Date.now() - closing).toBeLessThan(4_000);
    expect(done).toEqual(["a", "b", "c", "d", "e", "f", "slow"]);
  }, 30_000);
});
