import { serveFetch, type FetchHandler, type Listening, type RunningFetchServer, type Servable } from "./fetch-serve.js";
import type { ServeOptions } from "./node.js";

export type { ServeOptions } from "./node.js";

/** The part of Deno's `HttpServer` Trellis uses (Deno's own types are not a dependency). */
export interface DenoServer {
  readonly addr: { hostname: string; port: number };
  /** Stops accepting and resolves once the open requests are answered. */
  shutdown(): Promise<void>;
  readonly finished: Promise<void>;
}

interface DenoRuntime {
  serve(
    options: { port: number; hostname: string; signal: AbortSignal; onListen(address: unknown): void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
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
  return serveFetch("deno", (address, fetch) => listen(deno, address, fetch), app, options);
}

function listen(deno: DenoRuntime, address: { port: number; hostname: string }, fetch: FetchHandler): Listening<DenoServer> {
  const abort = new AbortController();
  // onListen given, so Deno prints no "Listening on" line of its own: the banner says it.
  const server = deno.serve({ ...address, signal: abort.signal, onListen: () => {} }, (request, info) => fetch(request, info.remoteAddr.hostname));
  return {
    server,
    hostname: server.addr.hostname,
    port: server.addr.port,
    stop: () => server.shutdown(),
    // Aborting the signal ends the server at once, open streams included.
    cut: () => abort.abort(),
  };
}
