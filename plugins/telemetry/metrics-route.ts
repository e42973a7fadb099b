import { timingSafeEqual } from "node:crypto";
import { RpcError, hasRole, type RouteDefinition } from "../../kernel/index.js";
import type { AppMetrics } from "./metrics.js";
import type { ResolvedMetrics } from "./options.js";

/**
 * `GET /metrics`: the Prometheus text of the app's registry, for the bearer token or a session
 * holding one of the roles. A wrong token is 401 like no credential at all; a signed-in caller
 * without the role is 403. Never cached.
 */
export function metricsRoute(options: ResolvedMetrics, metrics: AppMetrics): RouteDefinition {
  const expected = options.token === undefined ? undefined : Buffer.from(options.token);
  const tokenMatches = (header: string | null): boolean => {
    if (!expected || !header?.startsWith("Bearer ")) return false;
    const given = Buffer.from(header.slice(7).trim());
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return {
    method: "GET",
    path: options.path,
    // The session is asked for only when the token did not answer.
    context: false,
    handler: async (event) => {
      if (!tokenMatches(event.headers.get("authorization"))) {
        const { user } = await event.session();
        const message = expected ? "Send the metrics bearer token, or sign in with one of the roles" : "Sign in with one of the roles";
        if (!user) throw new RpcError("UNAUTHORIZED", { message: `${message}: ${options.roles.join(", ")}` });
        if (!hasRole(user, options.roles)) throw new RpcError("FORBIDDEN", { message: `Metrics need one of the roles: ${options.roles.join(", ")}` });
      }
      const text = await metrics.registry.metrics();
      return new Response(text, { headers: { "content-type": metrics.registry.contentType, "cache-control": "no-store" } });
    },
  };
}
