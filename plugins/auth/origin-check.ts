import { RpcError, errorResponse, type HttpMiddleware } from "../../kernel/index.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Cross-site request forgery guard: a state-changing request that carries a cookie and an `Origin`
 * outside the trusted set is refused with 403 before any handler runs. A missing `Origin` passes
 * (non-browser clients send none; browsers always send it on cross-origin POSTs). `*` alone is never
 * trusted here, even when CORS echoes any origin.
 */
type OriginList = readonly (string | null | undefined)[];

export function originCheck(fixed: readonly string[], dynamic?: (request: Request) => OriginList | Promise<OriginList>): HttpMiddleware {
  const trusted = matcher(fixed);
  const middleware: HttpMiddleware = async (event, next) => {
    if (SAFE_METHODS.has(event.method)) return next();
    const origin = event.headers.get("origin");
    if (!origin || !event.headers.has("cookie")) return next();
    if (origin === event.url.origin || trusted(origin)) return next();
    if (dynamic && matcher(await dynamic(event.request))(origin)) return next();
    return errorResponse(new RpcError("FORBIDDEN", { message: `Origin ${origin} is not trusted for cookie-authenticated requests` }), event.isRpc);
  };
  middleware.displayName = "auth:origin-check";
  return middleware;
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
