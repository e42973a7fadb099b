import { isConnectionLost } from "../lifecycle/availability.js";
import type { ChangeEvent } from "./changes.js";

/**
 * Live queries: `db.query.<table>.live(args)` is `findMany(args)` as a stream of full snapshots.
 *
 * - Invalidation comes from committed changes (`LiveHub.notify`): the app's own writes through the
 *   change feed, and, with the PostgreSQL provider, writes of other replicas through LISTEN/NOTIFY.
 * - One shared query per distinct (table, args): every subscriber of it gets the same snapshots.
 * - Re-runs are coalesced: while a re-run is in flight, further changes only mark it dirty, so a
 *   burst of writes costs at most two queries; a snapshot equal to the last is not sent.
 * - A subscriber holds one slot, not a queue: a slow consumer gets the newest snapshot, never a
 *   backlog. It is released on abort, on `return()`, and when the hub closes.
 */
export class LiveHub {
  readonly #watchers = new Map<string, Set<() => void>>();
  readonly #shared = new Map<string, SharedQuery<any>>();
  readonly #closing = new Set<() => void>();
  #closed = false;
  #activate: (() => void) | undefined;

  /** `activate` runs once, at the first subscription: apps that never go live never track changes. */
  constructor(activate?: () => void) {
    this.#activate = activate;
  }

  /** Marks every live query reading `change.table` stale. */
  notify(change: Pick<ChangeEvent, "table">): void {
    const watchers = this.#watchers.get(change.table);
    if (watchers) for (const watcher of [...watchers]) watcher();
  }

  /** How many distinct queries are live, and how many subscribers they have (for tests and metrics). */
  stats(): { queries: number; subscribers: number; watchers: number } {
    let subscribers = 0;
    for (const query of this.#shared.values()) subscribers += query.subscribers.size;
    let watchers = 0;
    for (const set of this.#watchers.values()) watchers += set.size;
    return { queries: this.#shared.size, subscribers, watchers };
  }

  subscribe<T>(key: string, tables: readonly string[], run: () => Promise<T>, signal?: AbortSignal): AsyncIterableIterator<T> {
    if (this.#closed) throw new Error("The app is closed; live queries cannot start");
    this.#activate?.();
    this.#activate = undefined;
    let shared = this.#shared.get(key) as SharedQuery<T> | undefined;
    if (!shared) {
      shared = new SharedQuery<T>(run, (error) => this.#fail(key, error));
      const query = shared;
      const watcher = () => query.invalidate();
      for (const table of tables) {
        let set = this.#watchers.get(table);
        if (!set) this.#watchers.set(table, (set = new Set()));
        set.add(watcher);
      }
      query.release = () => {
        for (const table of tables) {
          const set = this.#watchers.get(table);
          set?.delete(watcher);
          if (set?.size === 0) this.#watchers.delete(table);
        }
        this.#shared.delete(key);
      };
      this.#shared.set(key, query);
    }
    const subscriber = new Subscriber<T>(shared, signal);
    this.#closing.add(subscriber.end);
    subscriber.onEnd = () => this.#closing.delete(subscriber.end);
    shared.add(subscriber);
    return subscriber.iterator();
  }

  #fail(key: string, error: unknown): void {
    const shared = this.#shared.get(key);
    if (shared) for (const subscriber of [...shared.subscribers]) subscriber.fail(error);
  }

  /** Ends every subscription (at `close()`). */
  close(): void {
    this.#closed = true;
    for (const end of [...this.#closing]) end();
  }
}

class SharedQuery<T = unknown> {
  readonly subscribers = new Set<Subscriber<T>>();
  release: () => void = () => {};
  #last: { value: T; json: string } | undefined;
  #running = false;
  #dirty = false;
  #retryMs = 0;

  constructor(
    readonly run: () => Promise<T>,
    readonly fail: (error: unknown) => void,
  ) {}

  add(subscriber: Subscriber<T>): void {
    this.subscribers.add(subscriber);
    if (this.#last) subscriber.push(this.#last.value);
    if (!this.#running && !this.#last) void this.#refresh();
  }

  remove(subscriber: Subscriber<T>): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) this.release();
  }

  invalidate(): void {
    if (this.#running) this.#dirty = true;
    else void this.#refresh();
  }

  #retry(): void {
    this.#retryMs = Math.min(this.#retryMs ? this.#retryMs * 2 : 100, 2000);
    setTimeout(() => {
      if (this.subscribers.size > 0) this.invalidate();
    }, this.#retryMs).unref?.();
  }

  async #refresh(): Promise<void> {
    this.#running = true;
    try {
      do {
        this.#dirty = false;
        const value = await this.run();
        if (this.subscribers.size === 0) return;
        const json = JSON.stringify(value, (_, v) => (typeof v === "bigint" ? String(v) : v));
        if (this.#last?.json === json) continue;
        this.#last = { value, json };
        for (const subscriber of this.subscribers) subscriber.push(value);
      } while (this.#dirty);
      this.#retryMs = 0;
    } catch (error) {
      // A stream that has sent a snapshot outlives a lost database connection: the query is retried
      // with backoff (up to 2 s) and subscribers get a fresh snapshot once the database answers.
      if (this.#last && isConnectionLost(error)) this.#retry();
      else this.fail(error);
    } finally {
      this.#running = false;
    }
  }
}

class Subscriber<T> {
  #latest: { value: T } | undefined;
  #error: { error: unknown } | undefined;
  #waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  #done = false;
  onEnd: () => void = () => {};

  constructor(
    readonly shared: SharedQuery<T>,
    readonly signal?: AbortSignal,
  ) {
    signal?.addEventListener("abort", this.end, { once: true });
    if (signal?.aborted) queueMicrotask(this.end);
  }

  push(value: T): void {
    if (this.#done) return;
    if (this.#waiting) {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting.resolve({ done: false, value });
    } else {
      this.#latest = { value };
    }
  }

  fail(error: unknown): void {
    if (this.#done) return;
    if (this.#waiting) {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      this.end();
      waiting.reject(error);
    } else {
      this.#error = { error };
    }
  }

  readonly end = (): void => {
    if (this.#done) return;
    this.#done = true;
    this.signal?.removeEventListener("abort", this.end);
    this.shared.remove(this);
    this.onEnd();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.resolve({ done: true, value: undefined });
  };

  iterator(): AsyncIterableIterator<T> {
    const iterator: AsyncIterableIterator<T> = {
      next: () => {
        if (this.#error) {
          const { error } = this.#error;
          this.#error = undefined;
          this.end();
          return Promise.reject(error);
        }
        if (this.#latest) {
          const { value } = this.#latest;
          this.#latest = undefined;
          return Promise.resolve({ done: false, value });
        }
        if (this.#done) return Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
      },
      return: (value?: unknown) => {
        this.end();
        return Promise.resolve({ done: true, value: value as T });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}
