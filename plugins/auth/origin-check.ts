import { RpcError, errorResponse, type HttpMiddleware } from "../../kernel/index.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Cross-site request forgery guard, before any handler, on every path. A request that can change
 * state (not GET, HEAD or OPTIONS) and carries a `Cookie` is refused with 403 when:
 * - the browser says another site started it (`Sec-Fetch-Site: cross-site`) and its `Origin` is not
 *   one the app trusts by name (baseURL, CORS origins, trustedOrigins), whether `Origin` is
 *   missing, `null` or foreign: the browser's own signal, which a page cannot forge or suppress;
 * - or it has an `Origin` that is neither its own origin nor trusted.
 * Without `Origin` and without that signal it passes: non-browser clients (curl, servers) send
 * neither, and every browser sends at least one of them on a request another site starts. `*`
 * alone is never trusted here, even when CORS echoes any origin.
 */
type OriginList = readonly (string | null | undefined)[];

export function originCheck(fixed: readonly string[], dynamic?: (request: Request) => OriginList | Promise<OriginList>): HttpMiddleware {
  const trusted = matcher(fixed);
  const isTrusted = async (origin: string, request: Request) =>
    trusted(origin) || (dynamic !== undefined && matcher(await dynamic(request))(origin));
  const middleware: HttpMiddleware = async (event, next) => {
    if (SAFE_METHODS.has(event.method) || !event.headers.has("cookie")) return next();
    const origin = event.headers.get("origin");
    if (event.headers.get("sec-fetch-site")?.trim().toLowerCase() === "cross-site") {
      if (origin && (await isTrusted(origin, event.request))) return next();
      const message = origin
        ? `Origin ${origin} is not trusted for cookie-authenticated requests`
        : "A cross-site request (Sec-Fetch-Site: cross-site) without a trusted Origin cannot use cookies";
      return refuse(message, event.isRpc);
    }
    if (!origin || origin === event.url.origin || (await isTrusted(origin, event.request))) return next();
    return refuse(`Origin ${origin} is not trusted for cookie-authenticated requests`, event.isRpc);
  };
  middleware.displayName = "auth:origin-check";
  return middleware;
}

function refuse(message: string, isRpc: boolean): Response {
  return errorResponse(new RpcError("FORBIDDEN", { message }), isRpc);
}

/** Exact origins, plus patterns where `*` stands for any run of characters within the host. */
function matcher(origins: OriginList): (origin: string) => boolean {
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const origin of origins) {
    if (!origin || origin === "*") continue;
    if (!origin.includes("*")) exact.add(origin);
    else patterns.push(new RegExp(`^${origin.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, "\\$&")).join("[^/]*")}$`));
  }
  return (origin) => exact.has(origin) || patterns.some((pattern) => pattern.test(origin));
}

/** The fixed origins a cookie-bearing request may come from: baseURL, CORS origins and trustedOrigins. */
export function trustedOrigins(baseUrl: unknown, cors: readonly string[] | undefined, configured: unknown): string[] {
  const out = new Set<string>();
  if (typeof baseUrl === "string") {
    try {
      out.add(new URL(baseUrl).origin);
    } catch {
      // An invalid baseURL is the auth library's to report.
    }
  }
  for (const origin of cors ?? []) if (origin !== "*") out.add(origin);
  if (Array.isArray(configured)) for (const origin of configured) if (typeof origin === "string" && origin !== "*") out.add(origin);
  return [...out];
}
