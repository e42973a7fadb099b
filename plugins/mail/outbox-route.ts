import { RpcError, callerAddress, errorResponse, isLoopbackHost, type RouteDefinition } from "../../kernel/index.js";
import type { MailRows } from "./outbox.js";
import type { Unrecorded } from "./unrecorded.js";

/** Headers a proxy or tunnel adds: a request relayed from elsewhere also arrives from loopback. */
const RELAYED = ["x-forwarded-for", "forwarded", "x-real-ip"];

/**
 * Development only (never mounted in production, nor with a real transport): the latest message
 * to an address, link included, so a flow can be followed from a terminal (`curl`) with no mail
 * account. Loopback callers only, and never through a proxy or tunnel on the machine (ngrok, a
 * reverse proxy): a development server reachable on a network does not hand out other people's links.
 */
export function outboxRoute(path: string, rows: MailRows, unrecorded: Unrecorded): RouteDefinition {
  return {
    method: "GET",
    path,
    context: false,
    handler: async (event) => {
      const address = callerAddress(event);
      if (address && !isLoopbackHost(address)) {
        return errorResponse(new RpcError("FORBIDDEN", { message: "The development outbox answers loopback callers only" }), false);
      }
      if (RELAYED.some((name) => event.request.headers.has(name))) {
        return errorResponse(new RpcError("FORBIDDEN", { message: "The development outbox answers requests made on this machine only, not relayed by a proxy or tunnel" }), false);
      }
      const to = event.url.searchParams.get("to");
      if (!to) return errorResponse(new RpcError("BAD_REQUEST", { message: "Name the recipient: ?to=<address>" }), false);
      // A message queued by the request just before is written when its delivery starts: wait for it.
      await unrecorded.recorded(to, 5_000);
      const [latest] = await rows.list({ to, take: 1 });
      if (!latest) return errorResponse(new RpcError("NOT_FOUND", { message: `No message to ${to}` }), false);
      return Response.json({ id: latest.id, kind: latest.kind, to: latest.to, subject: latest.subject, state: latest.state, link: latest.link, text: latest.text, createdAt: latest.createdAt });
    },
  };
}
