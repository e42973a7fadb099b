import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Peer } from "crossws";
import { importPeer } from "../kernel/index.js";
import type { ChannelSocketService, SocketPeer } from "../plugins/channels/index.js";
import { socketHooks } from "./socket-hooks.js";

/** Where a peer's context keeps the upgraded TCP socket, for `sendFrame`. */
const RAW = "trellis:socket";
const OPEN = 1;

/**
 * A crossws peer, plus `sendFrame`: a frame framed once for all of a message's members is written
 * to the TCP socket itself, with no per-member copy or header. This keeps the socket library's
 * order because its writes are synchronous: compression, the one thing that would queue them, is
 * never negotiated (crossws's default). A closing socket (`readyState` past open) gets none.
 */
function nodePeer(peer: Peer): SocketPeer {
  const socket = peer.context[RAW] as Duplex;
  const websocket = peer.websocket;
  return {
    context: peer.context,
    // What the socket library reports (`ws.bufferedAmount`), without compression: the TCP socket's queue.
    get bufferedAmount() {
      return socket.writableLength;
    },
    send: (text) => peer.send(text),
    sendFrame(frame) {
      if (websocket.readyState !== OPEN || !socket.writable) return false;
      socket.write(frame);
      return true;
    },
    close: (code, reason) => peer.close(code, reason),
    terminate: () => peer.terminate(),
  };
}

/**
 * Mounts the channels' socket endpoint on a Node server's `upgrade` event through crossws (an
 * optional peer, loaded only for an app with `.channels()`). An upgrade on another path is
 * refused with 404. Returns what `close()` calls: every socket is closed.
 */
export async function mountSockets(server: Server, service: ChannelSocketService, addressOf: (socket: Duplex, headers: IncomingMessage["headers"]) => string): Promise<() => void> {
  // The package first, so a missing one is named with its install line; then its Node adapter.
  await importPeer("crossws", "realtime channels (.channels())");
  const { default: nodeAdapter } = await import("crossws/adapters/node");
  const { upgrading, hooks } = socketHooks(service, nodePeer);
  const adapter = nodeAdapter({ serverOptions: { maxPayload: service.maxFrameBytes }, hooks });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
    if (url.pathname !== service.path) {
      socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
    }
    const request = upgrading(new Request(url, { headers }), { clientAddress: addressOf(socket, req.headers) }, { [RAW]: socket });
    void adapter.handleUpgrade(req, socket, head, request);
  };
  server.on("upgrade", onUpgrade);
  return () => {
    server.off("upgrade", onUpgrade);
    adapter.closeAll(1001, "The server is shutting down", true);
  };
}
