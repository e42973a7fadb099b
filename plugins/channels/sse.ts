import { RpcError, errorResponse, type RequestEvent, type RouteDefinition, type AppRpcContext } from "../../kernel/index.js";
import { randomBytes } from "node:crypto";
import { Connection, type ConnectionDeps } from "./connection.js";
import { matchChannel } from "./patterns.js";
import { callerOf, type Connections } from "./registry.js";
import { assertChannelRule, joinRule } from "./rules.js";

const encoder = new TextEncoder();

/**
 * Channels for clients without sockets: `GET <path>/sse?channel=room:1&channel=...` opens an event
 * stream of the same frames (its first, `ready`, carries the stream's secret `token`; its `id` is
 * public, the key other members see), and frames go up as `POST <path>/sse/<token>` with one frame
 * as the JSON body, answered `204` or with the frame's
 * refusal as an HTTP status. The channels in the query are checked before the stream starts, so a
 * refusal is a real 401, 403 or 404. The stream is sticky: a POST reaches the replica holding it.
 */
export function sseRoutes(options: { path: string; connections: Connections; deps: () => ConnectionDeps; bufferBytes: number }): RouteDefinition[] {
  const { connections } = options;
  /** Open streams by their secret token. */
  const streams = new Map<string, Connection>();
  const open = async (event: RequestEvent, context: AppRpcContext): Promise<Response> => {
    try {
      const deps = options.deps();
      const wanted = event.url.searchParams.getAll("channel");
      if (wanted.length > deps.settings.limits.channelsPerConnection) {
        throw new RpcError("TOO_MANY_REQUESTS", { message: `A connection may be in at most ${deps.settings.limits.channelsPerConnection} channels` });
      }
      for (const channel of wanted) {
        const matched = matchChannel(deps.patterns, channel);
        if (!matched) throw new RpcError("NOT_FOUND", { message: `No channel matches "${channel}"` });
        await assertChannelRule(joinRule(matched), matched, channel, context);
      }
      const caller = callerOf(context, event);
      if (!connections.admits(caller)) throw new RpcError("TOO_MANY_REQUESTS", { message: `At most ${connections.options.perCaller} channel connections per caller` });
      let connection: Connection | undefined;
      const token = randomBytes(18).toString("base64url");
      const stream = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            connection = new Connection(
              {
                send: (message) => controller.enqueue(typeof message === "string" ? encoder.encode(`data: ${message}\n\n`) : message.event),
                buffered: () => options.bufferBytes - (controller.desiredSize ?? 0),
                close: () => {
                  try {
                    controller.close();
                  } catch {
                    // Already cancelled by the client.
                  }
                },
              },
              context,
              caller,
              { ...deps, onClose: (closed) => (streams.delete(token), deps.onClose(closed)) },
            );
            connections.add(connection, false);
            streams.set(token, connection);
            connection.start(token);
            for (const channel of wanted) void connection.post({ type: "join", channel }).catch(() => {});
          },
          cancel() {
            connection?.close(1000, "Closed");
          },
        },
        { highWaterMark: options.bufferBytes, size: (chunk) => chunk.byteLength },
      );
      event.request.signal?.addEventListener("abort", () => connection?.close(1000, "Closed"), { once: true });
      return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" } });
    } catch (error) {
      return errorResponse(error instanceof RpcError ? error : new RpcError("INTERNAL_SERVER_ERROR"), false);
    }
  };
  const post = async (event: RequestEvent, context: AppRpcContext): Promise<Response> => {
    try {
      const connection = streams.get(event.params.token ?? "");
      // Another caller's connection is as absent as a missing one.
      if (!connection || connection.caller !== callerOf(context, event)) throw new RpcError("NOT_FOUND", { message: "No channel stream with this id on this server" });
      let frame: unknown;
      try {
        frame = await event.request.json();
      } catch {
        throw new RpcError("BAD_REQUEST", { message: "The body must be one JSON frame" });
      }
      await connection.post(frame);
      return new Response(null, { status: 204 });
    } catch (error) {
      if (error instanceof RpcError) return errorResponse(error, false);
      throw error;
    }
  };
  return [
    { method: "GET", path: `${options.path}/sse`, handler: open as never },
    { method: "POST", path: `${options.path}/sse/:token`, handler: post as never },
  ];
}
