import { callerBucket, type AppRpcContext, type RequestEvent } from "../../kernel/index.js";
import type { Connection } from "./connection.js";
import { CLOSE } from "./connection.js";
import { Outgoing } from "./outgoing.js";

/**
 * Every connection of this process, counted per caller (the user, else the client address), with
 * the two sweeps that need no timer per connection: the heartbeat (a ping every interval; a
 * connection silent for two to three intervals is cut and so leaves its channels) and the
 * revalidation of rules.
 */
export class Connections {
  readonly all = new Set<Connection>();
  readonly #perCaller = new Map<string, number>();
  readonly #checking = new Set<Promise<void>>();
  #timers: ReturnType<typeof setInterval>[] = [];
  /** Connections that answer pings (sockets). */
  readonly #pinged = new WeakSet<Connection>();

  constructor(readonly options: { heartbeatMs: number; revalidateMs: number; perCaller: number }) {}

  start(): void {
    const { heartbeatMs, revalidateMs } = this.options;
    const ping = new Outgoing(JSON.stringify({ type: "ping" }));
    // A connection is cut when nothing came from it since the ping of two sweeps ago: it had a whole
    // interval to answer that ping, so a busy process (answers waiting to be read) is not silence.
    let pingedAt = Date.now();
    let pingedBefore = 0;
    this.#timers.push(
      setInterval(() => {
        // An SSE stream is pinged too (proxies close idle streams) but cannot answer: it lives as long as its request.
        for (const connection of this.all) {
          if (this.#pinged.has(connection) && connection.lastSeen < pingedBefore) connection.close(CLOSE.gone, "No answer to heartbeats");
          else connection.write(ping);
        }
        pingedBefore = pingedAt;
        pingedAt = Date.now();
      }, heartbeatMs),
      // Each connection is checked `revalidateMs` after its last check, so connections that came at
      // different times spread their session lookups instead of all running them at one tick.
      setInterval(() => {
        const due = Date.now() - revalidateMs;
        for (const connection of this.all) {
          if (connection.checkedAt > due) continue;
          const check = connection.revalidate().finally(() => this.#checking.delete(check));
          this.#checking.add(check);
        }
      }, Math.min(revalidateMs, 1_000)),
    );
    for (const timer of this.#timers) timer.unref?.();
  }

  /** Stops the sweeps, cuts every connection, and waits for the session lookups in flight (the database closes next). */
  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    for (const connection of [...this.all]) connection.close(CLOSE.gone, "The server is shutting down");
    await Promise.allSettled([...this.#checking]);
  }

  /** Whether `caller` may open one more connection. */
  admits(caller: string): boolean {
    return (this.#perCaller.get(caller) ?? 0) < this.options.perCaller;
  }

  add(connection: Connection, pinged: boolean): void {
    this.all.add(connection);
    if (pinged) this.#pinged.add(connection);
    this.#perCaller.set(connection.caller, (this.#perCaller.get(connection.caller) ?? 0) + 1);
  }

  remove(connection: Connection): void {
    if (!this.all.delete(connection)) return;
    const left = (this.#perCaller.get(connection.caller) ?? 1) - 1;
    if (left > 0) this.#perCaller.set(connection.caller, left);
    else this.#perCaller.delete(connection.caller);
  }

}

/** Who holds a connection: the signed-in user, else the client address (the rate limit's rule). */
export function callerOf(context: AppRpcContext, event: RequestEvent): string {
  if (context.user) return `user:${context.user.id}`;
  return `ip:${callerBucket(event) ?? "unknown"}`;
}
