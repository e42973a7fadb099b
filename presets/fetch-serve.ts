import { assertRuntimeSupports } from "./runtime-support.js";
import type { ServeOptions } from "./node.js";
import { serveWith, type Listening, type Servable } from "./serving.js";
import type { SocketEndpoint } from "./socket-hooks.js";
import type { BuiltApp } from "./types.js";

export type { Listening, Servable } from "./serving.js";

/** A Fetch handler as a runtime's server calls it, told the peer's address by the runtime. */
export type FetchHandler = (request: Request, peer: string | undefined) => Response | Promise<Response>;

/**
 * Starts the runtime's server on `address`, answering with `fetch`; with `sockets` (an app with
 * `.channels()`), a WebSocket upgrade on the endpoint's path opens a channel socket instead, and
 * `stop()` ends the open sockets first.
 */
export type Listen<Server> = (address: { port: number; hostname: string }, fetch: FetchHandler, sockets: SocketEndpoint | undefined) => Promise<Listening<Server>>;

export interface RunningFetchServer<Server> {
  readonly url: string;
  readonly server: Server;
  readonly app: BuiltApp<any, any>;
  /** The start banner's text (also when it was not shown). */
  readonly banner: string;
  /** Stops accepting connections, lets answers in flight finish, then closes the app. */
  close(): Promise<void>;
}

/**
 * `serve()` for a runtime with a Fetch-shaped server (Bun, Deno): the start, signals and graceful
 * close every runtime shares (presets/serving.ts) around the runtime's `listen`, after refusing
 * what the runtime cannot run (`RUNTIME_UNSUPPORTED`).
 */
export function serveFetch<Server>(
  runtime: "bun" | "deno",
  listen: Listen<Server>,
  app: Servable | (() => Servable | Promise<Servable>),
  options: ServeOptions,
): Promise<RunningFetchServer<Server>> {
  return serveWith<Server>(
    (address, { handle, addressOf, sockets }) => {
      const factsOf = (request: Request, peer: string | undefined) => ({
        clientAddress: addressOf(peer, request.headers.get("x-forwarded-for")) ?? "",
        requestId: request.headers.get("x-request-id"),
      });
      return listen(address, (request, peer) => handle(request, factsOf(request, peer)), sockets && { service: sockets, factsOf });
    },
    app,
    options,
    { check: (servable) => assertRuntimeSupports(runtime, servable) },
  );
}
