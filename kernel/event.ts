import { randomUUID } from "node:crypto";
import type { ORPCError } from "@orpc/server";
import { resolveSession, type SessionResolver, type SessionState } from "./request/session.js";
import type { RequestFacts } from "./request/facts.js";

/** The header a request id travels in, both ways. */
export const REQUEST_ID_HEADER = "x-request-id";
/** A caller's id is kept when it is a plain token (no spaces, quotes or separators a log could trip on). */
const SANE_REQUEST_ID = /^[\w.:/+=@-]{1,128}$/;

export type { RequestFacts } from "./request/facts.js";

/**
 * One incoming request as middleware and routes see it. Built once per request; `url` is parsed
 * lazily so handlers that only need the path pay for it once.
 */
export class RequestEvent {
  /** Middleware may replace it (the body limit does, to hand on a body it has already counted). */
  request: Request;
  readonly method: string;
  readonly path: string;
  params: Record<string, string> = EMPTY_PARAMS;
  /**
   * The caller's network address: the socket's under `trellis/node`'s `serve()` (or the proxy's
   * forwarded address under its `trustProxy`), whatever `handle(request, { clientAddress })` was
   * given otherwise. Undefined when unknown (a request built in process).
   */
  readonly clientAddress: string | undefined;
  /**
   * The body limit of the matched route or procedure, when it sets one; the body-limit plugin
   * applies it instead of its default. Set by the kernel before any middleware runs.
   */
  bodyLimit: number | undefined = undefined;
  /**
   * The procedure this request runs, set by surfaces that call one through the gate (REST, MCP);
   * `procedureName` also derives it from an `/rpc` path.
   */
  procedure: string | undefined = undefined;
  route: string | undefined = undefined; // the matched route's path template (`/files/:id`), set by the router
  /** @internal true for a request that came through `handle()` (not one built in process for `client()`). */
  served = false;
  /** @internal the error the request answered with, for its log line. */
  error: ORPCError<any, any> | undefined = undefined;
  /** @internal memoised session lookup; see `session.ts`. */
  sessionState: SessionState | Promise<SessionState> | undefined = undefined;
  /** @internal set by the kernel: how this app resolves sessions. */
  resolver: SessionResolver<RequestEvent> | undefined = undefined;
  #url: URL | undefined;
  #responseHeaders: Headers | undefined;
  #requestId: string | undefined;
  readonly #facts: RequestFacts | undefined;

  constructor(request: Request, facts?: RequestFacts) {
    this.request = request;
    this.method = request.method.toUpperCase();
    this.path = pathOf(request.url);
    this.clientAddress = facts?.clientAddress;
    this.#facts = facts;
  }

  /**
   * The caller's session, looked up at most once per request and shared with every later reader
   * (routes, procedures, the rate limiter). Anonymous without a credential, without a lookup.
   */
  session(): Promise<SessionState> {
    const state = resolveSession(this, this.resolver);
    return state instanceof Promise ? state : Promise.resolve(state);
  }

  /**
   * The request's id: the caller's `X-Request-Id` when it is a sane token, else a generated UUID.
   * The kernel sends it back in `X-Request-Id`; logs and `onError` carry it.
   */
  get requestId(): string {
    if (this.#requestId === undefined) {
      const incoming = this.#facts?.requestId !== undefined ? this.#facts.requestId : this.request.headers.get(REQUEST_ID_HEADER);
      this.#requestId = incoming !== null && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    }
    return this.#requestId;
  }

  /** The procedure the request runs: set by a surface, or the dotted name of an `/rpc` path. */
  get procedureName(): string | undefined {
    if (this.procedure !== undefined) return this.procedure;
    return this.path.startsWith("/rpc/") ? this.path.slice(5).replaceAll("/", ".") : undefined;
  }

  get headers(): Headers {
    return this.request.headers;
  }

  /** True under `/rpc/**`, where errors use the RPC envelope so the typed client decodes them. */
  get isRpc(): boolean {
    return this.path === "/rpc" || this.path.startsWith("/rpc/");
  }

  get url(): URL {
    return (this.#url ??= new URL(this.request.url));
  }

  /** Headers middleware wants on the response, whatever handler (or error) produces it. */
  get responseHeaders(): Headers {
    return (this.#responseHeaders ??= new Headers());
  }

  /** @internal true once anything set a response header (most requests never do). */
  get hasResponseHeaders(): boolean {
    return this.#responseHeaders !== undefined;
  }

  setHeader(name: string, value: string): void {
    this.responseHeaders.set(name, value);
  }

  appendHeader(name: string, value: string): void {
    this.responseHeaders.append(name, value);
  }
}

const EMPTY_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** The path of an absolute URL without building a URL object (the hot path of every request). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query !== -1) end = query;
  const hash = url.indexOf("#", start);
  if (hash !== -1 && hash < end) end = hash;
  return decodePath(url.slice(start, end));
}

function decodePath(path: string): string {
  if (!path.includes("%")) return path;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** The response with one header set: in place, or on a copy when its headers are immutable. */
export function withHeader(response: Response, name: string, value: string): Response {
  try {
    response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set(name, value);
    return copy;
  }
}
