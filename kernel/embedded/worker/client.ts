import type { Results, Transaction } from "@electric-sql/pglite";
import type { PGliteLike } from "../../db/dialect/pglite.js";
import { StatementTimeout, type DatabaseThread } from "./host.js";

/**
 * One embedded database on the database thread, seen from the request thread: the part of a PGlite
 * instance the dialect uses (`query`, `exec`, `transaction`, `close`), each call a message to the
 * thread. A transaction stays on the thread's single connection from BEGIN to COMMIT; its
 * statements name it, so nothing else can run inside it.
 */
export class ThreadClient implements PGliteLike {
  #closed = false;
  #closing: Promise<void> | undefined;
  #transactions = 0;
  #running = 0;
  readonly waitReady: Promise<void>;

  constructor(
    private readonly thread: DatabaseThread,
    private readonly db: number,
    dataDir: string,
    sharedBuffers: string,
    /** Every statement, transaction step and the close are given up past this (0: never). */
    private readonly timeoutMs = 0,
  ) {
    this.waitReady = thread.call({ op: "open", db, dataDir, sharedBuffers });
    this.waitReady.catch(() => {}); // reported to whoever awaits it
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** True while a statement sent to the thread has not answered yet. */
  get busy(): boolean {
    return this.#running > 0;
  }

  #track<T>(pending: Promise<T>): Promise<T> {
    this.#running++;
    const done = () => void this.#running--;
    pending.then(done, done);
    return pending;
  }

  query<T>(sql: string, params: unknown[] = []): Promise<Results<T>> {
    return this.#query(sql, params);
  }

  exec(sql: string): Promise<Array<Results>> {
    return this.#exec(sql);
  }

  #query<T>(sql: string, params: unknown[] = [], tx?: number): Promise<Results<T>> {
    if (this.#closed) return Promise.reject(new Error("PGlite is closed"));
    return this.#track(this.thread.call({ op: "query", db: this.db, tx, sql, params }, undefined, this.timeoutMs));
  }

  #exec(sql: string, tx?: number): Promise<Array<Results>> {
    if (this.#closed) return Promise.reject(new Error("PGlite is closed"));
    return this.#track(this.thread.call({ op: "exec", db: this.db, tx, sql }, undefined, this.timeoutMs));
  }

  /** A backup taken on the thread between two statements (kernel/embedded/backup.ts); the bytes arrive transferred. */
  backup(): Promise<Uint8Array> {
    if (this.#closed) return Promise.reject(new Error("PGlite is closed"));
    return this.#track(this.thread.call({ op: "dump", db: this.db }));
  }

  /** Serves the instance to psql on the Unix socket `path`, from the thread that holds it (kernel/embedded/socket.ts). */
  async serveSocket(path: string): Promise<{ stop(): Promise<void> }> {
    if (this.#closed) throw new Error("PGlite is closed");
    await this.thread.call({ op: "serve", db: this.db, path });
    return { stop: () => this.thread.call<void>({ op: "unserve", db: this.db, path }).catch(() => {}) };
  }

  async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error("PGlite is closed");
    const id = ++this.#transactions;
    try {
      await this.thread.call({ op: "begin", db: this.db, tx: id }, undefined, this.timeoutMs);
    } catch (error) {
      // Given up here, it may still begin on the thread: ended there too (messages arrive in
      // order), or it would hold the thread's connection for good.
      if (error instanceof StatementTimeout) this.thread.call({ op: "end", db: this.db, tx: id, commit: false }).catch(() => {});
      throw error;
    }
    let rolledBack = false;
    const tx: Transaction = {
      query: <R>(sql: string, params?: unknown[]) => this.#query<R>(sql, params, id),
      exec: (sql: string) => this.#exec(sql, id),
      rollback: async () => {
        rolledBack = true;
        await this.thread.call({ op: "rollback", db: this.db, tx: id }, undefined, this.timeoutMs);
      },
      sql: () => Promise.reject(new Error("tx.sql is not available on the embedded database thread; use tx.query")),
      listen: () => Promise.reject(new Error("LISTEN is not available on the embedded database thread")),
      get closed() {
        return rolledBack;
      },
    };
    let value: T;
    try {
      value = await callback(tx);
    } catch (error) {
      await this.thread.call({ op: "end", db: this.db, tx: id, commit: false }, undefined, this.timeoutMs).catch(() => {});
      throw error;
    }
    await this.thread.call({ op: "end", db: this.db, tx: id, commit: !rolledBack }, undefined, this.timeoutMs);
    return value;
  }

  close(): Promise<void> {
    this.#closed = true;
    return (this.#closing ??= this.waitReady
      .catch(() => {})
      .then(() => this.thread.call<void>({ op: "close", db: this.db }, undefined, this.timeoutMs))
      .catch(() => {}));
  }
}
