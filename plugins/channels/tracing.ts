import type { Telemetry } from "../../kernel/index.js";

/** Starts a span for one message; the returned function ends it with the number of members it reached. */
export type MessageSpan = (name: "channels.publish" | "channels.deliver", channel: string, event: string) => (members: number) => void;

/**
 * Spans for messages, when traces are on: `channels.publish` where a message is sent (a child of the
 * procedure, job or socket frame that sent it) and `channels.deliver` where another replica's message
 * is handed to this one's members. Each names the channel and event and counts the members reached.
 */
export function messageSpans(telemetry: Telemetry | undefined): MessageSpan | undefined {
  const tracer = telemetry?.tracer;
  if (!tracer) return undefined;
  return (name, channel, event) => {
    const span = tracer.startSpan(name, { attributes: { "trellis.channel": channel, "trellis.channel.event": event } });
    return (members) => {
      span.setAttribute("trellis.channel.members", members);
      span.end();
    };
  };
}
