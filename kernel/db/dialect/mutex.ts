/**
 * The lock around a single-connection database (PGlite, SQLite). Waiters are served in
 * arrival order, and a waiter gives up after a time limit instead of hanging forever:
 * on these databases a long wait almost always means a deadlock, not load.
 */

/** Default time a query waits for the single connection before failing. */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000;

/** Thrown when the single connection stays busy past the acquire timeout. */
export class AcquireTimeoutError extends Error {
  override readonly name = "AcquireTimeoutError";
  readonly code = "DB_ACQUIRE_TIMEOUT";

  constructor(database: string, timeoutMs: number) {
    super(
      `Timed out after ${timeoutMs} ms waiting for the ${database} connection. ` +
        `${database} has a single connection, so this is most likely a deadlock: a query on ` +
        "the outer db made while a transaction holds the connection. Inside a transaction, " +
        "query through the transaction handle, or open it with transact() so outer queries join it.",
    );
  }
}

export class ConnectionMutex {
  #locked = false;
  readonly #waiters: Array<() => void> = [];

  constructor(
    private readonly database: string,
    private readonly timeoutMs: number,
  ) {}

  lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(grant), 1);
        reject(new AcquireTimeoutError(this.database, this.timeoutMs));
      }, this.timeoutMs);
      this.#waiters.push(grant);
    });
  }

  /** Hands the connection straight to the next waiter, so no newcomer can overtake it. */
  unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }
}
