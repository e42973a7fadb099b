import { TrellisError, definePlugin, type AppPlugin, type RequestEvent, type SessionUser } from "../../kernel/index.js";
import { RATE_LIMIT_INVALID } from "./errors.js";
import { memoryRateLimitStore } from "./memory-store.js";
import { limiter } from "./middleware.js";
import type { RateLimitCharge } from "../../kernel/index.js";

export type { RateLimitCharge } from "../../kernel/index.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Counts extra cost against the current request's rate-limit keys (set when the rate limit is on). */
    "rate-limit": RateLimitCharge;
  }
}
import type { RateLimitStore } from "../../kernel/index.js";

export { memoryRateLimitStore, type MemoryRateLimitStore, type MemoryRateLimitStoreOptions } from "./memory-store.js";
export type { RateLimitHit, RateLimitStore } from "../../kernel/index.js";

export interface RateLimitConfig {
  /** Requests allowed per window per key. */
  max: number;
  /**
   * Failed credentials allowed per window per client address: once an address has spent them, a
   * request carrying a credential is refused (429) before it is looked up, so guessed keys, tokens
   * and cookies are throttled. Valid callers and requests without a credential never count here.
   * @default max
   */
  maxPerAddress?: number;
  /** Window length in milliseconds; fixed window, not sliding. */
  windowMs: number;
  /**
   * Identifies the caller: each key has its own budget of `max` per window, whatever address it
   * comes from.
   * @default `user:<id>` when signed in, else `ip:<client address>` (see `trustProxy` in `serve()`)
   */
  key?: (event: RequestEvent, user: SessionUser | null) => string | Promise<string>;
  /**
   * What the default key counts: `"caller"` (the user, else the address), or `"organization"`:
   * every member of an organization shares one budget while it is their session's active
   * organization (`org:<id>`); callers without one count as with `"caller"`. Ignored when `key` is set.
   * @default "caller"
   */
  by?: "caller" | "organization";
  /** Returning true lets the request through uncounted. */
  skip?: (event: RequestEvent) => boolean | Promise<boolean>;
  /**
   * Counter store; replace it to share counters between replicas (`redisRateLimitStore` from
   * `trellis/redis`). A store you pass is yours to close; the default one is closed with the app.
   * @default memoryRateLimitStore()
   */
  store?: RateLimitStore;
  /**
   * When the store fails (Redis unreachable, a timeout): `"open"` lets requests through uncounted,
   * `"closed"` answers 503 with `Retry-After: 1`. Either way the first failure of an outage is
   * reported to `onError`, and never becomes a 500.
   * @default "open"
   */
  onStoreError?: "open" | "closed";
}

export interface RateLimitPluginOptions {
  /**
   * Path prefixes limited, matched by segment; read when the app is built (the App adds the path of
   * `.mcp({ path })` to its list).
   * @default ["/rpc", "/rest", "/mcp"]
   */
  paths?: readonly string[];
}

/** The paths limited by default: `/rpc`, `/rest` and the MCP endpoint's default path. */
export const RATE_LIMITED_PATHS: readonly string[] = ["/rpc", "/rest", "/mcp"];

/**
 * Fixed-window rate limit at the `edge` stage, after CORS (so a 429 carries the CORS headers) and
 * before every route. `/api/auth/**` keeps the auth library's own limiter, and `/health` and
 * preflights are never counted, because neither sits under the limited prefixes.
 */
export function rateLimitPlugin(config: RateLimitConfig, options: RateLimitPluginOptions = {}): AppPlugin {
  const owned = config.store ? undefined : memoryRateLimitStore();
  const store = config.store ?? owned!;
  return definePlugin({
    name: "rate-limit",
    stage: "edge",
    validate() {
      const problems: string[] = [];
      if (!Number.isInteger(config.max) || config.max < 1) problems.push(`max must be a whole number of requests above 0, got ${config.max}`);
      if (config.maxPerAddress !== undefined && (!Number.isInteger(config.maxPerAddress) || config.maxPerAddress < 1)) {
        problems.push(`maxPerAddress must be a whole number of requests above 0, got ${config.maxPerAddress}`);
      }
      if (!Number.isInteger(config.windowMs) || config.windowMs < 1) problems.push(`windowMs must be a whole number of milliseconds above 0, got ${config.windowMs}`);
      if (config.onStoreError !== undefined && config.onStoreError !== "open" && config.onStoreError !== "closed") {
        problems.push(`onStoreError must be "open" or "closed", got ${JSON.stringify(config.onStoreError)}`);
      }
      if (typeof store?.hit !== "function") problems.push("store must have a hit(key, windowMs) method");
      if (problems.length > 0) {
        throw new TrellisError(RATE_LIMIT_INVALID, `rateLimit: ${problems.join("; ")}`, { plugin: "rate-limit", hook: "validate" });
      }
    },
    build(ctx) {
      if (owned) ctx.hooks.close.tap(async () => owned.close());
      const middleware = limiter({ ...config, store, paths: options.paths ?? RATE_LIMITED_PATHS, report: (error, source) => ctx.report(error, source) });
      // For calls that carry several (a resource batch costs one count per item).
      ctx.provide("rate-limit", { charge: middleware.charge } satisfies RateLimitCharge);
      return { middleware: [middleware] };
    },
  });
}
