import { isConnectionLost } from "../lifecycle/availability.js";
import { TableWatch, type LiveChange } from "./live-index.js";
import type { LiveFilter } from "./live-match.js";

/**
 * Live queries: `db.query.<table>.live(args)` is `findMany(args)` as a stream of full snapshots.
 *
 * - Invalidation comes from committed changes (`LiveHub.notify`): the app's own writes through the
 *   change feed, and, with the PostgreSQL provider, writes of other replicas through LISTEN/NOTIFY.
 *   A change that names its rows re-runs only the queries those rows can enter or leave.
 * - One shared query per distinct (table, args): every subscriber of it gets the same snapshots.
 * - Re-runs are coalesced: while a re-run is in flight, further changes only mark it dirty, so a
 *   burst of writes costs at most two queries; a snapshot equal to the last is not sent.
 * - A subscriber holds one slot, not a queue: a slow consumer gets the newest snapshot, never a
 *   backlog. It is released on abort, on `return()`, and when the hub closes.
 */
export class LiveHub {
  readonly #tables = new Map<string, TableWatch<SharedQuery<any>>>();
  readonly #shared = new Map<string, SharedQuery<any>>();
  readonly #closing = new Set<() => void>();
  #closed = false;
  #activate: (() => void) | undefined;

  /** `activate` runs once, at the first subscription: apps that never go live never track changes. */
  constructor(activate?: () => void) {
    this.#activate = activate;
  }

  /**
   * Marks stale the live queries reading `change.table` that the change can affect: all of them
   * when it names no rows, else those its rows can enter or leave (live-index.ts).
   */
  notify(change: LiveChange): void {
    this.#tables.get(change.table)?.notify(change);
  }

  /** How many distinct queries are live, and how many subscribers they have (for tests and metrics). */
  stats(): { queries: number; subscribers: number; watchers: number } {
    let subscribers = 0;
    for (const query of this.#shared.values()) subscribers += query.subscribers.size;
    let watchers = 0;
    for (const watch of this.#tables.values()) watchers += watch.size;
    return { queries: this.#shared.size, subscribers, watchers };
  }

  /**
   * Subscribes to the query `key` reading `tables`. With a `filter` (a query of `tables[0]` alone),
   * a change re-runs it only when a written row can enter or leave its result.
   */
  subscribe<T>(key: string, tables: readonly string[], run: () => Promise<T>, signal?: AbortSignal, filter?: LiveFilter): AsyncIterableIterator<T> {
    if (this.#closed) throw new Error("The app is closed; live queries cannot start");
    this.#activate?.();
    this.#activate = undefined;
    let shared = this.#shared.get(key) as SharedQuery<T> | undefined;
    if (!shared) {
      const query = (shared = new SharedQuery<T>(run, (error) => this.#fail(key, error), tables.length === 1 ? filter : undefined));
      const watches = tables.map((table) => {
        let watch = this.#tables.get(table);
        if (!watch) this.#tables.set(table, (watch = new TableWatch()));
        watch.add(query);
        return watch;
      });
      if (query.filter) {
        const [watch] = watches;
        query.onRun = (running) => watch!.running(query, running);
        query.onSnapshot = (value) => watch!.snapshot(query, value);
      }
      query.release = () => {
        tables.forEach((table, i) => {
          watches[i]!.delete(query);
          if (watches[i]!.size === 0 && this.#tables.get(table) === watches[i]) this.#tables.delete(table);
        });
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
  /** The table index follows runs in flight and the snapshot subscribers hold. */
  onRun: (running: boolean) => void = () => {};
  onSnapshot: (value: T) => void = () => {};
  #last: { value: T; json: string } | undefined;
  #running = false;
  #dirty = false;
  #retryMs = 0;

  constructor(
    readonly run: () => Promise<T>,
    readonly fail: (error: unknown) => void,
    readonly filter?: LiveFilter,
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
    this.onRun(true);
    try {
      do {
        this.#dirty = false;
        const value = await this.run();
        if (this.subscribers.size === 0) return;
        const json = JSON.stringify(value, (_, v) => (typeof v === "bigint" ? String(v) : v));
        if (this.#last?.json === json) continue;
        this.#last = { value, json };
        this.onSnapshot(value);
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
      this.onRun(false);
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
