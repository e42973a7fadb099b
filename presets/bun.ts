import { serveFetch, type FetchHandler, type Listening, type RunningFetchServer, type Servable } from "./fetch-serve.js";
import type { ServeOptions } from "./node.js";
import { importPeer } from "../kernel/index.js";
import { opensSocket, socketHooks, terminateAll, type SocketEndpoint } from "./socket-hooks.js";

export type { ServeOptions } from "./node.js";

/** The part of Bun's `Server` Trellis uses (Bun's own types are not a dependency). */
export interface BunServer {
  readonly hostname: string;
  readonly port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
  requestIP(request: Request): { address: string } | null;
}

interface BunRuntime {
  serve(options: {
    port: number;
    hostname: string;
    idleTimeout: number;
    /** crossws's handler for the sockets `fetch` upgrades (Bun calls it, not `fetch`, once upgraded). */
    websocket?: object;
    /** Nothing once `server.upgrade()` has taken the request over. */
    fetch(request: Request, server: BunServer): Response | undefined | Promise<Response | undefined>;
  }): BunServer;
}

export type RunningBunServer = RunningFetchServer<BunServer>;

/**
 * Bun only lets a connection idle 10 s by default; a live query's stream is quiet between changes
 * (its keep-alive comes every 5 s), so connections get the longest idle time Bun allows.
 */
const IDLE_TIMEOUT_S = 255;

/**
 * Serves an app with `Bun.serve`: the same options, start banner, start-up errors, SIGINT/SIGTERM
 * handling and graceful close as `serve()` from `trellis/node`. An `App` is started (built and
 * migrated) first; a function is called inside, so an error building the app prints as a start-up
 * error. Refuses, before starting, what Bun cannot run (`RUNTIME_UNSUPPORTED`, docs/deploy.md).
 */
export async function serve(app: Servable | (() => Servable | Promise<Servable>), options: ServeOptions = {}): Promise<RunningBunServer> {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (!bun) throw new Error("trellis/bun serves on Bun only: run this file with `bun`, or use serve() from trellis/node");
  return serveFetch("bun", (address, fetch, sockets) => listen(bun, address, fetch, sockets), app, options);
}

async function listen(bun: BunRuntime, address: { port: number; hostname: string }, fetch: FetchHandler, endpoint: SocketEndpoint | undefined): Promise<Listening<BunServer>> {
  const sockets = endpoint && (await bunSockets(endpoint));
  const server = bun.serve({
    ...address,
    idleTimeout: IDLE_TIMEOUT_S,
    ...(sockets && { websocket: sockets.websocket }),
    fetch: (request, server) => {
      const peer = server.requestIP(request)?.address;
      return sockets?.opens(request) ? sockets.upgrade(request, server, peer) : fetch(request, peer);
    },
  });
  return {
    server,
    hostname: server.hostname,
    port: server.port,
    // Without `true`, stop() lets the open requests finish and resolves when they have.
    stop: async () => {
      sockets?.close();
      await server.stop(false);
    },
    cut: () => void server.stop(true),
  };
}

/** Channels' socket endpoint through crossws's Bun adapter (an optional peer, loaded only for an app with `.channels()`). */
async function bunSockets({ service, factsOf }: SocketEndpoint) {
  // The package first, so a missing one is named with its install line; then its Bun adapter.
  await importPeer("crossws", "realtime channels (.channels())");
  const { default: bunAdapter } = await import("crossws/adapters/bun");
  const { upgrading, hooks } = socketHooks(service);
  const adapter = bunAdapter({ hooks });
  return {
    // Bun closes a socket sent a larger frame (1009), as Node's socket library does.
    websocket: { ...adapter.websocket, maxPayloadLength: service.maxFrameBytes },
    opens: (request: Request) => opensSocket(request, service.path),
    // A refused upgrade is the service's HTTP answer; an accepted one is Bun's from then on.
    upgrade: (request: Request, server: BunServer, peer: string | undefined) => adapter.handleUpgrade(upgrading(request, factsOf(request, peer)), server as never),
    close: () => terminateAll(adapter.peers as never),
  };
}
