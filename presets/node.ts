import { serve as serveNode, type HttpBindings } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { RESPOND, clientAddressRule, underTestRunner, type Respond, type TrustProxy } from "../kernel/index.js";
import { App } from "./app.js";
import { announce, bannerNotes } from "./banner.js";
import type { BuiltApp } from "./types.js";
import { assertPortFree } from "./port-check.js";
import { startupErrorText } from "./startup-error.js";
import { warnLocalBaseUrl } from "./production-checks.js";
import { devSupervisor } from "./cli/dev/hook.js";
import { mountSockets } from "./node-sockets.js";
import { openControlFor } from "./control-channel.js";
import { DRAIN_MS, STREAM_END_MS, inFlight, signals } from "./shutdown.js";

export interface ServeOptions {
  /** @default 3000 */
  port?: number;
  /** @default "localhost" */
  hostname?: string;
  /**
   * Which proxies may name the client in `X-Forwarded-For`. Off by default: the client address is the
   * socket's peer and forwarded headers are ignored, so a caller cannot choose their own rate-limit
   * bucket. A number is how many proxies stand in front (`1`: one load balancer); a list names the
   * proxies by address or CIDR range (`["10.0.0.0/8"]`); `true` takes the leftmost forwarded address
   * (only behind a proxy that overwrites the header). The result is `event.clientAddress`.
   * @default false
   */
  trustProxy?: TrustProxy;
  /**
   * Close the app (and so the database) on SIGINT/SIGTERM.
   * @default true
   */
  handleSignals?: boolean;
  /**
   * The start banner (URL, database, schema version, plugins, surfaces): printed once listening,
   * or logged as one line through the app's logger when the output is not a terminal. `false`
   * skips it; a function receives the text instead.
   * @default true (false under a test runner)
   */
  banner?: boolean | ((text: string) => void);
  /**
   * When the app cannot start (a database that cannot be reached, a port in use, a missing secret
   * or package), print the error as one block (code, message, fix; the stack only with `DEBUG`) on
   * stderr and exit the process with status 1. `false`: `serve()` rejects with the error instead.
   * @default true (false under a test runner)
   */
  exitOnStartError?: boolean;
  /**
   * On the embedded database, the control channel `trellis` commands use while this server holds the
   * data directory (`admin create`, `migrate status`, `doctor`, `db backup`): a listener on 127.0.0.1,
   * its address and a random token in `<dataDir>.control`, readable by this user only (docs/cli.md).
   * @default true
   */
  control?: boolean;
}

export interface RunningServer {
  readonly url: string;
  readonly server: Server;
  readonly app: BuiltApp<any, any>;
  /** The start banner's text (also when it was not shown). */
  readonly banner: string;
  /** Stops accepting connections, then closes the app. */
  close(): Promise<void>;
}

type Servable = App<any, any, any> | BuiltApp<any, any>;

/**
 * Serves an app over Node's HTTP server; an `App` is started (built and migrated) first. A function
 * is called inside `serve()`, so an error thrown while the app is configured (a malformed
 * `DATABASE_URL`, say) is printed like any other start-up error.
 */
export async function serve(app: Servable | (() => Servable | Promise<Servable>), options: ServeOptions = {}): Promise<RunningServer> {
  // Under `trellis dev` the supervisor owns signals, start-up errors and the control channel, across reloads.
  const dev = devSupervisor();
  if (dev) options = { ...options, handleSignals: false, exitOnStartError: false, control: false };
  try {
    const servable = typeof app === "function" ? await app() : app;
    const running = await listen(servable, options);
    dev?.served(running, servable);
    return running;
  } catch (error) {
    if (!(options.exitOnStartError ?? !underTestRunner())) throw error;
    process.stderr.write(startupErrorText(error));
    process.exit(1);
  }
}

async function listen(app: Servable, options: ServeOptions): Promise<RunningServer> {
  // A malformed setting throws before the app starts.
  const addressOf = clientAddressRule(options.trustProxy ?? false);
  await assertPortFree(options.port ?? 3000, options.hostname ?? "localhost");
  const built = app instanceof App ? await app.start() : app;
  warnLocalBaseUrl(built.sealed.baseUrl);
  // The address travels beside the request, never in a copy of it (no per-request allocation).
  // Node has already parsed the headers: the request id is read there, and written on Node's response,
  // so a request whose handler never reads a header builds no `Headers` either way (docs/performance.md).
  // A response the app gives at once is handed over as is, not in a promise: the adapter writes it at once.
  const respond: Respond = (built as { [RESPOND]?: Respond })[RESPOND] ?? ((request, facts) => built.handle(request, facts));
  // Requests whose answer is not produced yet: close() lets them finish (one answered at once is
  // not tracked). A stream (a live query) has its answer as soon as it starts, so it never holds close() up.
  const drain = inFlight();
  const fetch = (request: Request, env: HttpBindings) => {
    const { incoming, outgoing } = env;
    const headers = incoming.headers;
    const forwarded = headers["x-forwarded-for"];
    const requestId = headers["x-request-id"];
    return drain.track(respond(request, {
      // Empty, never undefined, when the socket is gone: the headers must not stand in for it.
      clientAddress: addressOf(incoming.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? null)) ?? "",
      requestId: typeof requestId === "string" ? requestId : null,
      response: outgoing,
    }));
  };
  // Open before the port answers: a command run as soon as /health says 200 finds the server.
  const control = options.control === false ? undefined : await openControlFor(app, built);
  const server = await new Promise<Server>((resolve) => {
    const created = serveNode(
      { fetch: fetch as never, port: options.port ?? 3000, hostname: options.hostname ?? "localhost" },
      () => resolve(created as Server),
    );
  });
  // Channels' sockets, when the app has `.channels()`: on the upgrade event, closed first at close().
  const sockets = built.sealed.service("channel-sockets");
  const closeSockets = sockets
    ? await mountSockets(server, sockets, (socket, headers) => {
        const forwarded = headers["x-forwarded-for"];
        return addressOf((socket as { remoteAddress?: string }).remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? null)) ?? "";
      })
    : undefined;
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  // Stop accepting, let the answers in flight be produced (up to DRAIN_MS), then close the app,
  // which ends open streams with their `done` event; connections still open after that are cut.
  const close = () =>
    (closing ??= (async () => {
      signals.forget(close);
      await control?.close();
      closeSockets?.();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await drain.settled(DRAIN_MS);
      // The connections end even when closing the app fails (a plugin's close hook): its error is close()'s.
      try {
        await built.close();
      } finally {
        server.closeIdleConnections();
        const cut = setTimeout(() => server.closeAllConnections(), STREAM_END_MS);
        await stopped;
        clearTimeout(cut);
      }
    })());
  if (options.handleSignals ?? true) signals.watch(close);
  const url = `http://${host}:${address.port}`;
  const notes = options.banner === false ? {} : await bannerNotes(built);
  return { url, server, app: built, banner: announce(built, url, options.banner, notes), close };
}
