import { serveFetch, type FetchHandler, type Listening, type RunningFetchServer, type Servable } from "./fetch-serve.js";
import type { ServeOptions } from "./node.js";
import { importPeer } from "../kernel/index.js";
import { opensSocket, socketHooks, terminateAll, type SocketEndpoint } from "./socket-hooks.js";

export type { ServeOptions } from "./node.js";

/** The part of Deno's `HttpServer` Trellis uses (Deno's own types are not a dependency). */
export interface DenoServer {
  readonly addr: { hostname: string; port: number };
  /** Stops accepting and resolves once the open requests are answered. */
  shutdown(): Promise<void>;
  readonly finished: Promise<void>;
}

interface DenoRequestInfo {
  remoteAddr: { hostname: string; port: number };
}

interface DenoRuntime {
  serve(
    options: { port: number; hostname: string; signal: AbortSignal; onListen(address: unknown): void },
    handler: (request: Request, info: DenoRequestInfo) => Response | Promise<Response>,
  ): DenoServer;
}

export type RunningDenoServer = RunningFetchServer<DenoServer>;

/**
 * Serves an app with `Deno.serve`: the same options, start banner, start-up errors, SIGINT/SIGTERM
 * handling and graceful close as `serve()` from `trellis/node`. An `App` is started (built and
 * migrated) first; a function is called inside, so an error building the app prints as a start-up
 * error. Refuses, before starting, what Deno cannot run (`RUNTIME_UNSUPPORTED`, docs/deploy.md).
 * Run with `deno run -A` (or the permissions docs/deploy.md lists) and a `node_modules` folder.
 */
export async function serve(app: Servable | (() => Servable | Promise<Servable>), options: ServeOptions = {}): Promise<RunningDenoServer> {
  const deno = (globalThis as { Deno?: DenoRuntime }).Deno;
  if (!deno) throw new Error("trellis/deno serves on Deno only: run this file with `deno run`, or use serve() from trellis/node");
  return serveFetch("deno", (address, fetch, sockets) => listen(deno, address, fetch, sockets), app, options);
}

async function listen(deno: DenoRuntime, address: { port: number; hostname: string }, fetch: FetchHandler, endpoint: SocketEndpoint | undefined): Promise<Listening<DenoServer>> {
  const sockets = endpoint && (await denoSockets(endpoint));
  const abort = new AbortController();
  // onListen given, so Deno prints no "Listening on" line of its own: the banner says it.
  const server = deno.serve({ ...address, signal: abort.signal, onListen: () => {} }, (request, info) =>
    sockets?.opens(request) ? sockets.upgrade(request, info) : fetch(request, info.remoteAddr.hostname),
  );
  return {
    server,
    hostname: server.addr.hostname,
    port: server.addr.port,
    stop: () => {
      sockets?.close();
      return server.shutdown();
    },
    // Aborting the signal ends the server at once, open streams included.
    cut: () => abort.abort(),
  };
}

/** Channels' socket endpoint through crossws's Deno adapter (an optional peer, loaded only for an app with `.channels()`). */
async function denoSockets({ service, factsOf }: SocketEndpoint) {
  // The package first, so a missing one is named with its install line; then its Deno adapter.
  await importPeer("crossws", "realtime channels (.channels())");
  const { default: denoAdapter } = await import("crossws/adapters/deno");
  const { upgrading, hooks } = socketHooks(service);
  const adapter = denoAdapter({
    hooks: {
      ...hooks,
      // Deno's sockets take frames of any size: a larger one than Node and Bun accept closes it the same way (1009).
      message: (peer, message) => {
        const text = message.text();
        if (Buffer.byteLength(text) > service.maxFrameBytes) return peer.close(1009, "Message too big");
        hooks.message(peer, message);
      },
    },
  });
  return {
    opens: (request: Request) => opensSocket(request, service.path),
    // Deno throws a TypeError on a malformed handshake (no Sec-WebSocket-Key, say): the client's mistake, a 400.
    upgrade: (request: Request, info: DenoRequestInfo) =>
      adapter.handleUpgrade(upgrading(request, factsOf(request, info.remoteAddr.hostname)), info).catch((error: unknown) => {
        if (error instanceof TypeError) return new Response(`${error.message}\n`, { status: 400 });
        throw error;
      }),
    close: () => terminateAll(adapter.peers as never),
  };
}
