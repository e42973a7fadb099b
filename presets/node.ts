import { serve as serveNode, type HttpBindings } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { TrustProxy } from "../kernel/index.js";
import type { BuiltApp } from "./types.js";
import { devSupervisor } from "./cli/dev/hook.js";
import { mountSockets } from "./node-sockets.js";
import { serveWith, type Listening, type Servable, type Serving } from "./serving.js";

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

/**
 * Serves an app over Node's HTTP server; an `App` is started (built and migrated) first. A function
 * is called inside `serve()`, so an error thrown while the app is configured (a malformed
 * `DATABASE_URL`, say) is printed like any other start-up error.
 */
export async function serve(app: Servable | (() => Servable | Promise<Servable>), options: ServeOptions = {}): Promise<RunningServer> {
  // Under `trellis dev` the supervisor owns signals, start-up errors and the control channel, across reloads.
  const dev = devSupervisor();
  if (dev) options = { ...options, handleSignals: false, exitOnStartError: false, control: false };
  return serveWith(listen, app, options, { served: (running, servable) => dev?.served(running, servable) });
}

async function listen(address: { port: number; hostname: string }, { handle, addressOf, sockets }: Serving): Promise<Listening<Server>> {
  // The address travels beside the request, never in a copy of it (no per-request allocation).
  // Node has already parsed the headers: the request id is read there, and written on Node's response,
  // so a request whose handler never reads a header builds no `Headers` either way (docs/performance.md).
  const fetch = (request: Request, env: HttpBindings) => {
    const { incoming, outgoing } = env;
    const headers = incoming.headers;
    const forwarded = headers["x-forwarded-for"];
    const requestId = headers["x-request-id"];
    return handle(request, {
      // Empty, never undefined, when the socket is gone: the headers must not stand in for it.
      clientAddress: addressOf(incoming.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? null)) ?? "",
      requestId: typeof requestId === "string" ? requestId : null,
      response: outgoing,
    });
  };
  const server = await new Promise<Server>((resolve) => {
    const created = serveNode({ fetch: fetch as never, ...address }, () => resolve(created as Server));
  });
  // Channels' sockets, when the app has `.channels()`: on the upgrade event, closed first at close().
  const closeSockets = sockets
    ? await mountSockets(server, sockets, (socket, headers) => {
        const forwarded = headers["x-forwarded-for"];
        return addressOf((socket as { remoteAddress?: string }).remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? null)) ?? "";
      })
    : undefined;
  const bound = server.address() as AddressInfo;
  return {
    server,
    hostname: bound.address,
    port: bound.port,
    stop: () => {
      closeSockets?.();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return stopped;
    },
    appClosed: () => server.closeIdleConnections(),
    cut: () => server.closeAllConnections(),
  };
}
