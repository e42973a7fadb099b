import { protocol, type PGlite } from "@electric-sql/pglite";
import { importPeer } from "../runtime/peers.js";

/** A socket server started on an instance: stopped by its starter, or when the instance closes. */
export interface ServedSocket {
  stop(): Promise<void>;
}

interface SocketServer {
  start(): Promise<void>;
  stop(): Promise<void>;
}

type SocketServerClass = new (options: { db: unknown; path: string; maxConnections: number }) => SocketServer;

const served = new WeakMap<PGlite, Set<ServedSocket>>();

/**
 * Serves the instance to PostgreSQL clients (psql) on the Unix socket `path`, with PGlite's socket
 * server (`@electric-sql/pglite-socket`), beside the app that keeps using it: on the thread that
 * holds the instance, since the socket server needs the instance itself (`trellis db shell` beside
 * a running server). Whoever can open `path` is in: put it in a folder only its owner can enter.
 */
export async function serveSocket(client: PGlite, path: string): Promise<ServedSocket> {
  const { PGLiteSocketServer } = await importPeer<{ PGLiteSocketServer: SocketServerClass }>("@electric-sql/pglite-socket", "`trellis db shell` beside a running server");
  const server = new PGLiteSocketServer({ db: sharedView(client), path, maxConnections: 1 });
  await server.start();
  const list = served.get(client) ?? new Set();
  served.set(client, list);
  let stopping: Promise<void> | undefined;
  const socket: ServedSocket = {
    stop: () =>
      (stopping ??= (async () => {
        list.delete(socket);
        await server.stop();
      })()),
  };
  list.add(socket);
  return socket;
}

/** Stops every socket server on `client` (its close: a client of a closed instance gets its connection ended). */
export async function stopSockets(client: PGlite): Promise<void> {
  await Promise.all([...(served.get(client) ?? [])].map((socket) => socket.stop()));
}

/**
 * The instance as the socket server sees it: each of the client's messages runs between the app's
 * statements, never inside one of the app's transactions (PGlite's `query`, `exec` and `transaction`
 * hold its transaction lock; the socket server alone would take only the statement lock). A
 * transaction the client opens keeps that lock until it ends, so the app's statements wait for its
 * COMMIT or ROLLBACK instead of running inside it.
 */
function sharedView(client: PGlite) {
  let held: (() => void) | undefined;
  const hold = () =>
    new Promise<() => void>((taken) => {
      void client._runExclusiveTransaction(() => new Promise<void>((release) => taken(release)));
    });
  const runExclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    held ??= await hold();
    try {
      return await client.runExclusive(fn);
    } finally {
      if (!client.isInTransaction()) {
        held?.();
        held = undefined;
      }
    }
  };
  return {
    waitReady: client.waitReady,
    runExclusive,
    isInTransaction: () => client.isInTransaction(),
    execProtocolRawStream: client.execProtocolRawStream.bind(client),
    // The socket server's ROLLBACK of a client that left in a transaction: under the lock it holds.
    exec: (sql: string) => runExclusive(() => client.execProtocolRaw(protocol.serialize.query(sql))),
  };
}
