import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { importPeer } from "../kernel/index.js";
import type { ChannelSocketService } from "../plugins/channels/index.js";
import { socketHooks } from "./socket-hooks.js";

/**
 * Mounts the channels' socket endpoint on a Node server's `upgrade` event through crossws (an
 * optional peer, loaded only for an app with `.channels()`). An upgrade on another path is
 * refused with 404. Returns what `close()` calls: every socket is closed.
 */
export async function mountSockets(server: Server, service: ChannelSocketService, addressOf: (socket: Duplex, headers: IncomingMessage["headers"]) => string): Promise<() => void> {
  // The package first, so a missing one is named with its install line; then its Node adapter.
  await importPeer("crossws", "realtime channels (.channels())");
  const { default: nodeAdapter } = await import("crossws/adapters/node");
  const { upgrading, hooks } = socketHooks(service);
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
    const request = upgrading(new Request(url, { headers }), { clientAddress: addressOf(socket, req.headers) });
    void adapter.handleUpgrade(req, socket, head, request);
  };
  server.on("upgrade", onUpgrade);
  return () => {
    server.off("upgrade", onUpgrade);
    adapter.closeAll(1001, "The server is shutting down", true);
  };
}
