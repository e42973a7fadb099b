import { addRoute, createRouter, findRoute, routesOverlap, type RouterContext } from "rou3";
import type { RequestEvent } from "./event.js";
import type { AppRpcContext } from "./context.js";

/** Route tiers, matched in this order: the first that matches wins. */
export const TIER = Object.freeze({ user: 0, plugin: 1, rpc: 2 });

export type RouteMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "ALL" | "*" | (string & {});

/** A raw route. The handler returns a `Response`, or a JSON-serialisable value sent as JSON. */
export interface RouteDefinition {
  method: RouteMethod;
  /** A rou3 pattern: `/files/:id`, `/api/auth/**`. */
  path: string;
  handler: RouteHandler;
  /**
   * Whether the handler needs the request context (and so the resolved session). Routes that do
   * their own authentication, such as the auth library's, set false and receive `undefined`.
   * @default true
   */
  context?: boolean;
  /**
   * Largest request body this route accepts, in bytes, instead of the app's default (an upload
   * route raises it). Applied by the body-limit plugin once the route is matched.
   */
  bodyLimit?: number;
  /**
   * Dispatch this route even while the app cannot serve (setup still running or failed, or after
   * `close()`), instead of waiting for setup or answering 503; the handler reads `sealed.state()`
   * itself. The health probe sets it so that it answers in every state.
   * @default false
   */
  beforeReady?: boolean;
}

export type RouteHandler = (event: RequestEvent, context: AppRpcContext<any>) => unknown;

export interface RouteMatch {
  route: RouteDefinition;
  params: Record<string, string> | undefined;
}

/**
 * Routes in tiers: user `.route()`s first, then plugin routes, then the kernel's `/rpc/**`. The
 * first tier that matches wins, so a user route beats a built-in even where rou3's own ranking
 * (static before wildcard) would say otherwise.
 */
export class TieredRouter {
  readonly #tiers: RouterContext<RouteDefinition>[] = [];
  readonly #list: { tier: number; method: string; path: string }[] = [];
  /** Who mounted each route of `#list` (a plugin's name, `app` for `.route()`, `rpc`), for the start banner. */
  readonly #owners: string[] = [];
  /** True once a route sets its own body limit; until then no request pays for the lookup. */
  hasBodyLimits = false;

  add(tier: number, route: RouteDefinition, owner = "app"): void {
    if (route.bodyLimit !== undefined) this.hasBodyLimits = true;
    while (this.#tiers.length <= tier) this.#tiers.push(createRouter<RouteDefinition>());
    const method = normaliseMethod(route.method);
    addRoute(this.#tiers[tier], method, route.path, route);
    this.#list.push({ tier, method: method ?? "ALL", path: route.path });
    this.#owners.push(owner);
  }

  /** The route for a method and path, `"method"` when only another method matches, or undefined. */
  match(method: string, path: string): RouteMatch | "method" | undefined {
    for (const tier of this.#tiers) {
      const found = findRoute(tier, method, path) ?? (method === "HEAD" ? findRoute(tier, "GET", path) : undefined);
      if (found) return { route: found.data, params: found.params };
    }
    for (const tier of this.#tiers) {
      for (const other of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
        if (other !== method && findRoute(tier, other, path)) return "method";
      }
    }
    return undefined;
  }

  /** The body limit of the route a request would reach, if it sets one. */
  bodyLimitOf(method: string, path: string): number | undefined {
    const match = this.match(method, path);
    return typeof match === "object" ? match.route.bodyLimit : undefined;
  }

  /** True when no route in a tier before `tier` could match a path under `pattern`. */
  ownsPrefix(tier: number, pattern: string): boolean {
    return this.#list.every((route) => route.tier >= tier || !routesOverlap(route.path, pattern));
  }

  /** Every registered route with who mounted it. */
  owned(): { owner: string; method: string; path: string }[] {
    return this.#list.map(({ method, path }, index) => ({ owner: this.#owners[index]!, method, path }));
  }

  /** Every registered route, for introspection. */
  list(): readonly { tier: number; method: string; path: string }[] {
    return this.#list;
  }
}

function normaliseMethod(method: string): string | undefined {
  const upper = method.toUpperCase();
  return upper === "ALL" || upper === "*" ? undefined : upper;
}
