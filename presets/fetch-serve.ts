import { RESPOND, clientAddressRule, underTestRunner, type Respond } from "../kernel/index.js";
import { App } from "./app.js";
import { announce, bannerNotes } from "./banner.js";
import { assertRuntimeSupports } from "./runtime-support.js";
import { openControlFor } from "./control-channel.js";
import type { ServeOptions } from "./node.js";
import { assertPortFree } from "./port-check.js";
import { warnLocalBaseUrl } from "./production-checks.js";
import { DRAIN_MS, STREAM_END_MS, inFlight, signals } from "./shutdown.js";
import type { SocketEndpoint } from "./socket-hooks.js";
import { startupErrorText } from "./startup-error.js";
import type { BuiltApp } from "./types.js";

export type Servable = App<any, any, any> | BuiltApp<any, any>;

/** A Fetch handler as a runtime's server calls it, told the peer's address by the runtime. */
export type FetchHandler = (request: Request, peer: string | undefined) => Response | Promise<Response>;

/** What a runtime's own HTTP server (`Bun.serve`, `Deno.serve`) hands back once listening. */
export interface Listening<Server> {
  server: Server;
  /** The bound address: `hostname` and the port (a real one when 0 was asked). */
  hostname: string;
  port: number;
  /** Stops accepting; resolves once the open connections have finished. */
  stop(): Promise<void>;
  /** Ends whatever is still open. */
  cut(): void;
}

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
 * `serve()` for a runtime with a Fetch-shaped server (Bun, Deno): the same start (port check, start
 * and migrate, banner, control channel), signals and graceful close as `trellis/node`'s, around the
 * runtime's `listen`.
 */
export async function serveFetch<Server>(
  runtime: "bun" | "deno",
  listen: Listen<Server>,
  app: Servable | (() => Servable | Promise<Servable>),
  options: ServeOptions,
): Promise<RunningFetchServer<Server>> {
  try {
    const servable = typeof app === "function" ? await app() : app;
    assertRuntimeSupports(runtime, servable);
    return await start(listen, servable, options);
  } catch (error) {
    if (!(options.exitOnStartError ?? !underTestRunner())) throw error;
    process.stderr.write(startupErrorText(error));
    process.exit(1);
  }
}

async function start<Server>(
  listen: Listen<Server>,
  app: Servable,
  options: ServeOptions,
): Promise<RunningFetchServer<Server>> {
  const addressOf = clientAddressRule(options.trustProxy ?? false);
  const port = options.port ?? 3000;
  const hostname = options.hostname ?? "localhost";
  await assertPortFree(port, hostname);
  const built = app instanceof App ? await app.start() : app;
  warnLocalBaseUrl(built.sealed.baseUrl);
  const respond: Respond = (built as { [RESPOND]?: Respond })[RESPOND] ?? ((request, facts) => built.handle(request, facts));
  const drain = inFlight();
  const factsOf = (request: Request, peer: string | undefined) => ({
    clientAddress: addressOf(peer, request.headers.get("x-forwarded-for")) ?? "",
    requestId: request.headers.get("x-request-id"),
  });
  const fetch: FetchHandler = (request, peer) => drain.track(respond(request, factsOf(request, peer)));
  const service = built.sealed.service("channel-sockets");
  const control = options.control === false ? undefined : await openControlFor(app, built);
  const listening = await listen({ port, hostname }, fetch, service && { service, factsOf });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      signals.forget(close);
      await control?.close();
      const stopped = listening.stop();
      await drain.settled(DRAIN_MS);
      try {
        await built.close();
      } finally {
        const cut = setTimeout(() => listening.cut(), STREAM_END_MS);
        await stopped;
        clearTimeout(cut);
      }
    })());
  if (options.handleSignals ?? true) signals.watch(close);
  const host = listening.hostname.includes(":") ? `[${listening.hostname}]` : listening.hostname;
  const url = `http://${host}:${listening.port}`;
  const notes = options.banner === false ? {} : await bannerNotes(built);
  return { url, server: listening.server, app: built, banner: announce(built, url, options.banner, notes), close };
}
