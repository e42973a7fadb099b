import type { RequestFacts } from "../kernel/index.js";
import type { ChannelSocketService, SocketPeer } from "../plugins/channels/index.js";

/**
 * crossws's hooks for channels' socket endpoint, the same under every runtime's adapter (Node, Bun,
 * Deno): the service admits or refuses the upgrade and owns each peer from open to close. crossws
 * hands the upgrade hook the request alone, so the runtime names its client first with `upgrading`
 * (and may leave on the peer's context what its `peerOf` needs, as Node leaves the TCP socket).
 */
export function socketHooks(service: ChannelSocketService, peerOf: (peer: any) => SocketPeer = (peer) => peer as SocketPeer) {
  const facts = new WeakMap<Request, { facts: RequestFacts; context: Record<string, unknown> | undefined }>();
  return {
    upgrading(request: Request, requestFacts: RequestFacts, context?: Record<string, unknown>): Request {
      facts.set(request, { facts: requestFacts, context });
      return request;
    },
    hooks: {
      upgrade: async (request: Request) => {
        const known = facts.get(request);
        const answer = await service.upgrade(request, known?.facts ?? {});
        return answer instanceof Response ? answer : { context: { ...answer.context, ...known?.context } };
      },
      open: (peer: unknown) => service.open(peerOf(peer)),
      message: (peer: unknown, message: { text(): string }) => service.message(peer as SocketPeer, message.text()),
      close: (peer: unknown) => service.close(peer as SocketPeer),
      error: (peer: unknown) => service.close(peer as SocketPeer),
    },
  };
}

/** Channels' socket endpoint as a runtime's server mounts it: the service, and each upgrade's client. */
export interface SocketEndpoint {
  service: ChannelSocketService;
  factsOf(request: Request, peer: string | undefined): RequestFacts;
}

/** Whether a request asks to open the channels' socket: a WebSocket upgrade on the service's path. */
export function opensSocket(request: Request, path: string): boolean {
  return request.headers.get("upgrade")?.toLowerCase() === "websocket" && new URL(request.url).pathname === path;
}

/** Ends every open socket at once (crossws's peers by namespace), as close() does on Node. */
export function terminateAll(peers: Map<string, Set<{ terminate(): void }>>): void {
  for (const set of peers.values()) for (const peer of set) peer.terminate();
}
