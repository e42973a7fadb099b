import { serve as serveNode, type HttpBindings } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { App } from "./app.js";
import type { BuiltApp } from "./types.js";

export interface ServeOptions {
  /** @default 3000 */
  port?: number;
  /** @default "localhost" */
  hostname?: string;
  /**
   * Trust `x-forwarded-for` / `x-real-ip` from the client. Off by default: both are overwritten with
   * the socket address, so a caller cannot choose their own rate-limit bucket.
   * @default false
   */
  trustProxy?: boolean;
  /**
   * Close the app (and so the database) on SIGINT/SIGTERM.
   * @default true
   */
  handleSignals?: boolean;
}

export interface RunningServer {
  readonly url: string;
  readonly server: Server;
  readonly app: BuiltApp<any, any>;
  /** Stops accepting connections, then closes the app. */
  close(): Promise<void>;
}

/** Serves an app over Node's HTTP server; an `App` is started (built and migrated) first. */
export async function serve(app: App<any, any, any> | BuiltApp<any, any>, options: ServeOptions = {}): Promise<RunningServer> {
  const built = app instanceof App ? await app.start() : app;
  const trustProxy = options.trustProxy ?? false;
  const fetch = trustProxy
    ? (request: Request) => built.handle(request)
    : (request: Request, env: HttpBindings) => built.handle(withSocketAddress(request, env.incoming.socket.remoteAddress));
  const server = await new Promise<Server>((resolve) => {
    const created = serveNode(
      { fetch: fetch as never, port: options.port ?? 3000, hostname: options.hostname ?? "localhost" },
      () => resolve(created as Server),
    );
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await built.close();
    })());
  if (options.handleSignals ?? true) {
    const onSignal = (signal: NodeJS.Signals) => {
      void close().finally(() => process.kill(process.pid, signal));
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  return { url: `http://${host}:${address.port}`, server, app: built, close };
}

function withSocketAddress(request: Request, address: string | undefined): Request {
  const headers = new Headers(request.headers);
  headers.delete("x-forwarded-for");
  headers.delete("x-real-ip");
  if (address) headers.set("x-real-ip", address.startsWith("::ffff:") ? address.slice(7) : address);
  return new Request(request, { headers });
}
