import { RESPOND, clientAddressRule, underTestRunner, type RequestFacts, type Respond } from "../kernel/index.js";
import type { ChannelSocketService } from "../plugins/channels/index.js";
import { App } from "./app.js";
import { announce, bannerNotes } from "./banner.js";
import { openControlFor } from "./control-channel.js";
import type { ServeOptions } from "./node.js";
import { assertPortFree } from "./port-check.js";
import { warnLocalBaseUrl } from "./production-checks.js";
import { DRAIN_MS, STREAM_END_MS, inFlight, signals } from "./shutdown.js";
import { startupErrorText } from "./startup-error.js";
import type { BuiltApp } from "./types.js";

export type Servable = App<any, any, any> | BuiltApp<any, any>;

/** What a runtime's listen is handed: the app's answer, the client-address rule, the channels' sockets. */
export interface Serving {
  /**
   * The app's answer to a request. Requests whose answer is not produced yet are counted, and
   * close() lets them finish (one answered at once is not, nor is a stream once it has started,
   * so a live query never holds close() up). A response given at once comes back as is, not in a
   * promise.
   */
  handle(request: Request, facts: RequestFacts): Response | Promise<Response>;
  /** The client's address from the socket's peer and `X-Forwarded-For`, under `trustProxy`. */
  addressOf(peer: string | undefined, forwarded: string | null): string | undefined;
  /** Channels' socket endpoint, when the app has `.channels()`. */
  sockets: ChannelSocketService | undefined;
}

/** A runtime's server, listening. */
export interface Listening<Server> {
  server: Server;
  /** The bound address: `hostname` and the port (a real one when 0 was asked). */
  hostname: string;
  port: number;
  /** Ends the channels' sockets, stops accepting; resolves once the open connections have finished. */
  stop(): Promise<void>;
  /** Once the app is closed: ends the connections left idle (Node's kept-alive ones). */
  appClosed?(): void;
  /** Ends whatever is still open. */
  cut(): void;
}

export type Listen<Server> = (address: { port: number; hostname: string }, serving: Serving) => Promise<Listening<Server>>;

export interface Running<Server> {
  readonly url: string;
  readonly server: Server;
  readonly app: BuiltApp<any, any>;
  /** The start banner's text (also when it was not shown). */
  readonly banner: string;
  /** Stops accepting connections, lets answers in flight finish, then closes the app. */
  close(): Promise<void>;
}

/** What a runtime's serve() adds around the shared start: a check of the app before it starts, and a word once it serves. */
export interface ServeHooks<Server> {
  check?(app: Servable): void;
  served?(running: Running<Server>, app: Servable): void;
}

/**
 * The start and graceful close every runtime's `serve()` shares around its own `listen`: the app
 * made (a function is called inside, so an error configuring it prints like any other start-up
 * error), the port checked, the app started, the control channel opened, then the banner; on
 * close (or SIGINT/SIGTERM), stop accepting, let the answers in flight finish (up to DRAIN_MS),
 * close the app (open streams end with their `done` event), then cut what is left. A start-up
 * error is printed as one block and exits with status 1, unless `exitOnStartError` is false.
 */
export async function serveWith<Server>(
  listen: Listen<Server>,
  app: Servable | (() => Servable | Promise<Servable>),
  options: ServeOptions,
  hooks: ServeHooks<Server> = {},
): Promise<Running<Server>> {
  try {
    const servable = typeof app === "function" ? await app() : app;
    hooks.check?.(servable);
    const running = await start(listen, servable, options);
    hooks.served?.(running, servable);
    return running;
  } catch (error) {
    if (!(options.exitOnStartError ?? !underTestRunner())) throw error;
    process.stderr.write(startupErrorText(error));
    process.exit(1);
  }
}

async function start<Server>(listen: Listen<Server>, app: Servable, options: ServeOptions): Promise<Running<Server>> {
  // A malformed setting throws before the app starts.
  const addressOf = clientAddressRule(options.trustProxy ?? false);
  const port = options.port ?? 3000;
  const hostname = options.hostname ?? "localhost";
  await assertPortFree(port, hostname);
  const built = app instanceof App ? await app.start() : app;
  warnLocalBaseUrl(built.sealed.baseUrl);
  const respond: Respond = (built as { [RESPOND]?: Respond })[RESPOND] ?? ((request, facts) => built.handle(request, facts));
  const drain = inFlight();
  const serving: Serving = {
    handle: (request, facts) => drain.track(respond(request, facts)),
    addressOf,
    sockets: built.sealed.service("channel-sockets"),
  };
  // Open before the port answers: a command run as soon as /health says 200 finds the server.
  const control = options.control === false ? undefined : await openControlFor(app, built);
  const listening = await listen({ port, hostname }, serving);
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      signals.forget(close);
      await control?.close();
      const stopped = listening.stop();
      await drain.settled(DRAIN_MS);
      // The connections end even when closing the app fails (a plugin's close hook): its error is close()'s.
      try {
        await built.close();
      } finally {
        listening.appClosed?.();
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
