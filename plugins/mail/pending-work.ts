/**
 * Work started without the caller waiting for it (a message delivered after the response, the
 * device lookup a sign-in starts), awaited all together by `flush()` and `close()`.
 */
export class PendingWork {
  readonly #pending = new Set<Promise<void>>();

  /** Runs `task` on a later microtask; a failure goes to `failed`, never to the caller. */
  run(task: () => Promise<void>, failed: (error: unknown) => void): void {
    this.track(Promise.resolve().then(task).catch(failed));
  }

  /** Holds `work` (already started, its failures handled) until it settles. */
  track(work: Promise<void>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }

  /** Resolves when all work tracked so far, and all it started meanwhile, is settled. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
