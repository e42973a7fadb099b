import type { LiveProvider } from "../../contracts/resources.js";
import { importPeer } from "../../runtime/peers.js";

/**
 * Live providers for `db.live`. Every provider re-runs live queries after the app's own committed
 * writes (tracked in process); a provider that can `listen` also hears writes of other processes.
 */

/** Single process (SQLite, or one PostgreSQL replica): changes made through this app only. */
export function localLive(): LiveProvider {
  return { kind: "local" };
}

export type PostgresLiveOptions = { connectionString: string } | { pool: { connect(): Promise<PgClient> } };

interface PgClient {
  query(text: string): Promise<unknown>;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error" | "end", listener: (error?: Error) => void): unknown;
  removeAllListeners(): unknown;
  release?(destroy?: boolean): void;
  end?(): Promise<void>;
}

/** What a listening provider hands the live plugin. */
export interface LiveListener {
  close(): Promise<void>;
}

export interface ListeningLiveProvider extends LiveProvider {
  listen(channel: string, onMessage: (payload: string) => void, onReconnect: () => void): Promise<LiveListener>;
}

/**
 * PostgreSQL across replicas: triggers created after migrations NOTIFY on every write to a live
 * table, and each replica LISTENs on one dedicated connection. A dropped connection reconnects
 * (with backoff) and then every live query is refreshed, so nothing missed while it was down stays
 * missed.
 */
export function postgresLive(options: PostgresLiveOptions): ListeningLiveProvider {
  const connect = async (): Promise<PgClient> => {
    if ("pool" in options) return options.pool.connect();
    const { default: pg } = await importPeer<typeof import("pg")>("pg", "PostgreSQL live queries (postgresLive)");
    const client = new pg.Client({ connectionString: options.connectionString });
    await client.connect();
    return client as unknown as PgClient;
  };
  return {
    kind: "postgres",
    async listen(channel, onMessage, onReconnect) {
      let closed = false;
      let client: PgClient | undefined;
      let delay = 100;
      const drop = (current: PgClient): Promise<void> => {
        current.removeAllListeners();
        // Until it has ended, an error on it (the server terminating it) is nobody's: without a
        // listener, pg's 'error' event would end the process.
        current.on("error", () => {});
        // A client that failed is never given back to a pool.
        if (current.release) current.release(true);
        else return (current.end?.() ?? Promise.resolve()).catch(() => undefined);
        return Promise.resolve();
      };
      const open = async (): Promise<void> => {
        const current = await connect();
        current.on("notification", (message) => {
          if (message.channel === channel && message.payload) onMessage(message.payload);
        });
        const lost = () => {
          if (closed || client !== current) return;
          client = undefined;
          void drop(current);
          setTimeout(reconnect, delay).unref?.();
        };
        current.on("error", lost);
        current.on("end", lost);
        // A connection that fails its LISTEN, or that arrives after close(), is dropped here: one
        // left checked out would hold the pool's end() (and so the app's close()) forever.
        try {
          await current.query(`LISTEN "${channel}"`);
        } catch (error) {
          void drop(current);
          throw error;
        }
        if (closed) return void (await drop(current));
        client = current;
      };
      const reconnect = async () => {
        if (closed) return;
        try {
          await open();
          delay = 100;
          onReconnect();
        } catch {
          delay = Math.min(delay * 2, 5_000);
          if (!closed) setTimeout(reconnect, delay).unref?.();
        }
      };
      await open();
      return {
        async close() {
          closed = true;
          const current = client;
          client = undefined;
          // Its end is waited for (a caller may drop the database next), but never for long.
          if (current) await Promise.race([drop(current), new Promise((done) => setTimeout(done, 2_000).unref?.())]);
        },
      };
    },
  };
}
