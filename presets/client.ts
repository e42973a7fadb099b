import { createORPCClient } from "@orpc/client";
import { RPCLink } from "@orpc/client/fetch";
import { customJsonSerializers } from "../kernel/wire/custom-json.js";
import type { ClientOf } from "./types.js";

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
}

/**
 * The typed client over the RPC wire format, for browsers and servers:
 * `createClient<InferRouter<typeof app>>({ url })`. It speaks the same serializers as the server,
 * so `Date`, `bigint` strings and `Uint8Array` arrive as they left.
 */
export function createClient<Router>(options: ClientOptions): ClientOf<Router> {
  const link = new RPCLink({
    url: `${options.url.replace(/\/$/, "")}/rpc`,
    headers: async () => {
      const headers = typeof options.headers === "function" ? await options.headers() : options.headers;
      return Object.fromEntries(new Headers(headers));
    },
    fetch: options.fetch,
    customJsonSerializers: [...customJsonSerializers],
  });
  return createORPCClient(link) as ClientOf<Router>;
}

export type { ClientOf, InferRouter } from "./types.js";
export { RpcError, isRpcError, type RpcErrorCode } from "./rpc-error.js";
