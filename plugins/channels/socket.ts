import { RequestEvent, RpcError, type RequestFacts, type SealedApp } from "../../kernel/index.js";
import { CLOSE, Connection, type ConnectionDeps } from "./connection.js";
import type { Outgoing } from "./outgoing.js";
import { callerOf, type Connections } from "./registry.js";

/** How long a slow consumer has to read its close frame before its socket is cut. */
const SLOW_CUT_MS = 1_000;

/** The slice of a WebSocket peer (crossws's `Peer`) a connection uses. */
export interface SocketPeer {
  readonly context: Record<string, unknown>;
  readonly bufferedAmount: number;
  send(data: string): unknown;
  /**
   * Writes a whole, ready WebSocket text frame (`Outgoing.frame`) straight to the connection, so a
   * message to many members is framed once; false when it cannot (the socket is closing), and the
   * text goes through `send`. Optional: a runtime without it sends every frame through `send`.
   */
  sendFrame?(frame: Uint8Array): boolean;
  close(code?: number, reason?: string): void;
  terminate(): void;
}

/**
 * The socket side of channels, which a runtime preset mounts on its server's upgrade event
 * (`serve()` does, through crossws): the upgrade is refused with a plain HTTP status (403 for a
 * foreign origin carrying a cookie, 429 over the caller's connections), else the peer becomes a
 * connection.
 */
export interface ChannelSocketService {
  /** The path sockets upgrade on. */
  readonly path: string;
  /** Largest frame the socket library accepts; above it the socket is closed (1009). */
  readonly maxFrameBytes: number;
  upgrade(request: Request, facts: RequestFacts): Promise<Response | { context: Record<string, unknown> }>;
  open(peer: SocketPeer): void;
  message(peer: SocketPeer, text: string): void;
  close(peer: SocketPeer): void;
}

const KEY = "trellis:channels";

export function socketService(options: {
  path: string;
  maxFrameBytes: number;
  origins: readonly string[];
  connections: Connections;
  deps: () => ConnectionDeps;
  sealed: () => SealedApp;
}): ChannelSocketService {
  const { connections } = options;
  const refuse = (error: InstanceType<typeof RpcError>) => Response.json({ code: error.code, status: error.status, message: error.message }, { status: error.status });
  return {
    path: options.path,
    maxFrameBytes: options.maxFrameBytes,
    async upgrade(request, facts) {
      // A browser sends its cookies with a socket to any site: a cookie from a foreign page is refused (CSWSH).
      const origin = request.headers.get("origin");
      if (origin && request.headers.has("cookie") && !sameOrigin(origin, request) && !options.origins.includes(origin)) {
        return refuse(new RpcError("FORBIDDEN", { message: `The origin ${origin} may not open a channel socket` }));
      }
      const event = new RequestEvent(request, facts);
      const context = await options.sealed().createContext(event);
      const caller = callerOf(context, event);
      if (!connections.admits(caller)) {
        return refuse(new RpcError("TOO_MANY_REQUESTS", { message: `At most ${connections.options.perCaller} channel connections per caller` }));
      }
      return { context: { [KEY]: { context, caller } } };
    },
    open(peer) {
      const pending = peer.context[KEY] as { context: Connection["context"]; caller: string } | undefined;
      if (!pending) return peer.close(1011, "Unexpected");
      if (!connections.admits(pending.caller)) return peer.close(1008, "Too many connections for this caller");
      const connection = new Connection(
        {
          send: (message: string | Outgoing) => {
            if (typeof message === "string") peer.send(message);
            else if (!peer.sendFrame?.(message.frame)) peer.send(message.text);
          },
          buffered: () => peer.bufferedAmount,
          close: (code, reason) => {
            if (code === CLOSE.gone) return peer.terminate();
            peer.close(code, reason);
            // A slow consumer's close frame waits behind what it has not read, and the socket library
            // would hold all of it until the peer answers (30 s): the socket is cut a second later.
            if (code === CLOSE.slow) setTimeout(() => peer.terminate(), SLOW_CUT_MS).unref();
          },
        },
        pending.context,
        pending.caller,
        options.deps(),
      );
      peer.context[KEY] = connection;
      connections.add(connection, true);
      connection.start();
    },
    message(peer, text) {
      const connection = peer.context[KEY];
      if (connection instanceof Connection) connection.receive(text);
    },
    close(peer) {
      const connection = peer.context[KEY];
      if (connection instanceof Connection) connection.close(1000, "Closed");
    },
  };
}

function sameOrigin(origin: string, request: Request): boolean {
  try {
    return new URL(origin).host === (request.headers.get("host") ?? new URL(request.url).host);
  } catch {
    return false;
  }
}
