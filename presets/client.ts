import { createORPCClient } from "@orpc/client";
import { RPCLink } from "@orpc/client/fetch";
import { customJsonSerializers } from "../kernel/wire/custom-json.js";
import type { ClientOf } from "./types.js";
import { channelClient, type ChannelsClient } from "./channel-client.js";

export interface ClientOptions {
  /** The app's origin, e.g. `https://api.example.com` (the client calls `<url>/rpc/...`). */
  url: string;
  /** Extra headers on every call, or a function evaluated per call. */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /**
   * The fetch implementation; set `credentials: "include"` through it for cross-origin cookies.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
  /**
   * For `client.channel()`: the WebSocket class (the browser's by default; on Node 20 pass
   * `WebSocket` from `undici`) and the channels' path (default `/channels`).
   */
  channels?: { WebSocket?: unknown; path?: string };
}

/**
 * The typed client over the RPC wire format, for browsers and servers:
 * `createClient<InferRouter<typeof app>>({ url })`. It speaks the same serializers as the server,
 * so `Date`, `bigint` strings and `Uint8Array` arrive as they left.
 */
export function createClient<Router>(options: ClientOptions): ClientOf<Router> & ChannelsClient<Router> {
  const link = new RPCLink({
    url: `${options.url.replace(/\/$/, "")}/rpc`,
    headers: async () => {
      const headers = typeof options.headers === "function" ? await options.headers() : options.headers;
      return Object.fromEntries(new Headers(headers));
    },
    fetch: options.fetch,
    customJsonSerializers: [...customJsonSerializers],
  });
  const procedures = createORPCClient(link) as Record<string, unknown>;
  // `channel()` and `closeChannels()` beside the procedures; the socket opens at the first channel.
  let channels: ReturnType<typeof channelClient> | undefined;
  const sockets = () => (channels ??= channelClient({ url: options.url, headers: options.headers, ...options.channels }));
  return new Proxy(procedures, {
    get(target, key, receiver) {
      if (key === "channel") return (name: string) => sockets().channel(name);
      if (key === "closeChannels") return () => channels?.close();
      return Reflect.get(target, key, receiver);
    },
  }) as never;
}

export type { ClientOf, InferRouter } from "./types.js";
export type { ChannelHandle, ChannelsClient } from "./channel-client.js";
export { RpcError, isRpcError, type RpcErrorCode } from "./rpc-error.js";
