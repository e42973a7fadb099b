import type { Definition } from "./registry.js";
import { runJob, type FetchedJob, type RunDeps } from "./run-job.js";

/** What a worker needs of the engine: fetching marks the jobs `active` for this process. */
export interface Fetcher {
  fetch(name: string, options: { batchSize: number; includeMetadata: true }): Promise<unknown[] | null>;
}

/**
 * One kind's worker: up to `concurrency` handlers at once, each job settled on its own by
 * `runJob` (completed or failed, nothing else touches it afterwards). A slot that frees is filled at
 * once, so a slow job never holds back the others of its kind; an idle worker polls once per
 * interval, and `notify()` (a send from this process) wakes it.
 */
export class KindWorker {
  readonly #running = new Set<Promise<void>>();
  /** Jobs may be waiting (at start, after a full fetch, after `notify()`): fetch without sleeping a poll. */
  #more = true;
  #stopping = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  /** Fetches begun so far, and `drain()`s waiting for one begun after they asked. */
  #fetches = 0;
  #waiting: { after: number; resolve: (fetched: number) => void }[] = [];

  constructor(
    private readonly engine: Fetcher,
    private readonly definition: Definition,
    private readonly deps: RunDeps,
    private readonly pollingMs: number,
  ) {}

  start(): void {
    this.#loop = this.#run();
  }

  /** A job may be waiting: fetch now rather than at the next poll. */
  notify(): void {
    this.#more = true;
    // Two milliseconds later: the sender's next statements (the admin API reading the job it retried) go
    // first, and the fetch's now() is past the job's start_after. The engine fetches only jobs with
    // start_after < now(), and the embedded database's clock counts whole milliseconds: a fetch in the
    // millisecond of the insert would miss the job until the next poll (and drain() would return early).
    setTimeout(() => this.#wake?.(), 2);
  }

  /**
   * Runs every job of this kind that is due now: wakes the loop, waits for a fetch begun after the
   * call, lets the handlers settle, and again until a fetch finds none. Resolves how many ran.
   */
  async drain(): Promise<number> {
    let ran = 0;
    for (;;) {
      const fetched = await new Promise<number>((resolve) => {
        this.#waiting.push({ after: this.#fetches, resolve });
        this.notify();
      });
      ran += fetched;
      while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
      if (fetched === 0 || this.#stopping) return ran;
    }
  }

  /** Stops fetching, then resolves once every running handler has settled its job. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    for (const waiter of this.#waiting.splice(0)) waiter.resolve(0);
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      const free = this.definition.concurrency - this.#running.size;
      // Every slot busy: a finishing job wakes the loop. Nothing known to be waiting: sleep a poll.
      if (free === 0 || !this.#more) await this.#pause(free === 0 ? undefined : this.pollingMs);
      if (this.#stopping) break;
      const slots = this.definition.concurrency - this.#running.size;
      if (slots === 0) continue;
      this.#more = false;
      const fetch = ++this.#fetches;
      let jobs: unknown[] = [];
      try {
        jobs = (await this.engine.fetch(this.definition.name, { batchSize: slots, includeMetadata: true })) ?? [];
      } catch (error) {
        this.deps.report(error);
      }
      // Fetched jobs are active for this process: they run even when a stop began meanwhile.
      for (const job of jobs) this.#start(job as FetchedJob);
      this.#waiting = this.#waiting.filter((waiter) => waiter.after >= fetch || void waiter.resolve(jobs.length));
      // A full fetch means more may be waiting: fetch again as soon as a slot is free.
      if (jobs.length === slots) this.#more = true;
    }
  }

  #start(job: FetchedJob): void {
    const task = runJob(this.definition, job, this.deps).catch(this.deps.report);
    this.#running.add(task);
    void task.finally(() => {
      this.#running.delete(task);
      this.#wake?.();
    });
  }

  #pause(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
