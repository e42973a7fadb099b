import { serveFetch, type FetchHandler, type Listening, type RunningFetchServer, type Servable } from "./fetch-serve.js";
import type { ServeOptions } from "./node.js";

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
    fetch(request: Request, server: BunServer): Response | Promise<Response>;
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
  return serveFetch("bun", (address, fetch) => listen(bun, address, fetch), app, options);
}

function listen(bun: BunRuntime, address: { port: number; hostname: string }, fetch: FetchHandler): Listening<BunServer> {
  const server = bun.serve({
    ...address,
    idleTimeout: IDLE_TIMEOUT_S,
    fetch: (request, server) => fetch(request, server.requestIP(request)?.address),
  });
  return {
    server,
    hostname: server.hostname,
    port: server.port,
    // Without `true`, stop() lets the open requests finish and resolves when they have.
    stop: async () => void (await server.stop(false)),
    cut: () => void server.stop(true),
  };
}
