import { RpcError, callerAddress, type RequestEvent } from "../../kernel/index.js";

/**
 * The header the auth library reads the client address from (its sign-in limiter keys on it, and
 * new sessions store it as `ipAddress`). Whatever a client sends under this name is replaced by the
 * address the transport decided (`event.clientAddress`, see `trustProxy` in `serve()`), so the
 * library and Trellis' own rate limit always agree on who the caller is.
 */
export const CLIENT_ADDRESS_HEADER = "x-trellis-client-address";

/** The request as the auth library must see it: with the decided client address, and only that. */
export function withClientAddress(event: RequestEvent, request: Request): Request {
  const address = callerAddress(event);
  if (request.headers.get(CLIENT_ADDRESS_HEADER) === (address ?? null)) return request;
  const headers = new Headers(request.headers);
  if (address) headers.set(CLIENT_ADDRESS_HEADER, address);
  else headers.delete(CLIENT_ADDRESS_HEADER);
  return new Request(request, { headers });
}

/**
 * A procedure may hand `context.headers` to the library (`auth.api.signInEmail({ headers })`), so a
 * client that sent the header itself gets it corrected in place, before any handler runs. Checked
 * with `has()` only: requests without it (all honest ones) pay no copy and no write.
 */
export function correctClientAddress(event: RequestEvent): void {
  const headers = event.headers;
  if (!headers.has(CLIENT_ADDRESS_HEADER)) return;
  const address = callerAddress(event);
  try {
    if (address) headers.set(CLIENT_ADDRESS_HEADER, address);
    else headers.delete(CLIENT_ADDRESS_HEADER);
  } catch {
    // Immutable headers (a request built by a platform): refuse rather than pass a chosen address on.
    throw new RpcError("BAD_REQUEST", { message: `The ${CLIENT_ADDRESS_HEADER} header is reserved` });
  }
}
