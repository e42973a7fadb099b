import { randomUUID } from "node:crypto";
import { definePlugin, type AppPlugin } from "trellis/kernel";

/** What the plugin adds to every request context. */
export interface RequestIdContext {
  requestId: string;
}

/**
 * An in-house plugin written against `trellis/kernel` alone: a middleware that tags every response
 * with `x-request-id` (the caller's, when it sends a sane one), a context field carrying the same
 * id, and a procedure that echoes it.
 */
export function requestIdPlugin(options: { header?: string } = {}): AppPlugin {
  const header = options.header ?? "x-request-id";
  return definePlugin({
    name: "request-id",
    stage: "edge",
    build(ctx) {
      ctx.hooks.context.tap((context, event) => {
        (context as typeof context & RequestIdContext).requestId = event?.responseHeaders.get(header) ?? randomUUID();
      });
      return {
        middleware: [
          async (event, next) => {
            const incoming = event.headers.get(header);
            event.setHeader(header, incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID());
            return next();
          },
        ],
        procedures: {
          "requestId.current": ctx.base.handler(({ context }) => (context as typeof context & RequestIdContext).requestId),
        },
      };
    },
  });
}
