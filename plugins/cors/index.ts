import { TrellisError, definePlugin, type AppPlugin, type HttpMiddleware } from "../../kernel/index.js";
import { CORS_WILDCARD_CREDENTIALS } from "./errors.js";

export interface CorsConfig {
  /** Allowed origins, compared exactly with the `Origin` header; `["*"]` echoes any origin. */
  origins: string[];
  /**
   * Sends `Access-Control-Allow-Credentials: true` (cookie auth across origins). Not with `["*"]`.
   * @default false
   */
  credentials?: boolean;
  /**
   * Request headers a browser may send.
   * @default the headers the preflight asks for
   */
  allowHeaders?: string[];
  /**
   * How long a browser may cache a preflight, in seconds.
   * @default 600
   */
  maxAge?: number;
}

const METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
const EXPOSED = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Content-Disposition, ETag";

/**
 * CORS at the `edge` stage, so even a 404, a 429 or an error carries the headers a browser needs
 * to read it. Without a config nothing is set.
 */
export function corsPlugin(config?: CorsConfig): AppPlugin {
  return definePlugin({
    name: "cors",
    stage: "edge",
    validate() {
      if (config?.credentials && config.origins.includes("*")) {
        throw new TrellisError(CORS_WILDCARD_CREDENTIALS, 'cors.credentials cannot be true with the wildcard origin "*"; list the origins', {
          plugin: "cors",
          hook: "validate",
        });
      }
    },
    build() {
      if (!config || config.origins.length === 0) return;
      return { middleware: [corsMiddleware(config)] };
    },
  });
}

function corsMiddleware(config: CorsConfig): HttpMiddleware {
  const any = config.origins.includes("*");
  const allowed = new Set(config.origins);
  const maxAge = String(config.maxAge ?? 600);
  // Not `async`: a non-preflight request hands `next()`'s promise straight through.
  const middleware: HttpMiddleware = (event, next) => {
    const origin = event.headers.get("origin");
    event.appendHeader("Vary", "Origin");
    const permitted = origin !== null && (any || allowed.has(origin));
    const preflight = event.method === "OPTIONS" && event.headers.has("access-control-request-method");
    if (permitted) {
      event.setHeader("Access-Control-Allow-Origin", origin);
      if (config.credentials) event.setHeader("Access-Control-Allow-Credentials", "true");
      if (!preflight) event.setHeader("Access-Control-Expose-Headers", EXPOSED);
    }
    if (!preflight) return next();
    if (permitted) {
      event.setHeader("Access-Control-Allow-Methods", METHODS);
      const requested = event.headers.get("access-control-request-headers");
      const headers = config.allowHeaders?.join(", ") ?? requested;
      if (headers) event.setHeader("Access-Control-Allow-Headers", headers);
      event.setHeader("Access-Control-Max-Age", maxAge);
    }
    return Promise.resolve(new Response(null, { status: 204 }));
  };
  middleware.displayName = "cors:headers";
  return middleware;
}
