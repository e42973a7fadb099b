import { RpcError } from "../../kernel/index.js";
import { parseEvent } from "./connection.js";
import type { Hub } from "./hub.js";
import type { ChannelDefinitions, ChannelName, DeclaredChannels } from "./options.js";
import { matchChannel, type ChannelPattern } from "./patterns.js";
import type { Connections } from "./registry.js";
import type { z } from "zod";

type EventsOf<D extends DeclaredChannels, C extends string> = {
  [P in keyof D & string]: C extends ChannelName<P> ? D[P]["events"] : never;
}[keyof D & string];

/** `context.channels`: messages from the server, to every member on every replica. */
export interface ChannelsService<D extends DeclaredChannels = ChannelDefinitions> {
  /**
   * Sends `event` with `payload` to every member of `channel` (no join rule applies: the server
   * speaks). The payload is validated by the event's schema: an unknown channel or event, or an
   * invalid or oversized payload, throws a 400 or 413 `RpcError`.
   */
  publish<C extends ChannelName<keyof D & string>, E extends keyof EventsOf<D, C> & string>(channel: C, event: E, payload: z.input<EventsOf<D, C>[E] & z.ZodType>): void;
  /** What is open in this process: connections, and per channel its members and presence keys. */
  stats(): ChannelStats;
}

export interface ChannelStats {
  transport: "local" | "redis" | "postgres";
  connections: number;
  published: number;
  delivered: number;
  channels: Array<{ channel: string; members: number; presence: number }>;
}

export function channelsService(hub: Hub, patterns: readonly ChannelPattern[], connections: Connections, maxPayloadBytes: number): ChannelsService {
  return {
    publish(channel: string, event: string, payload: unknown) {
      const matched = matchChannel(patterns, channel);
      if (!matched) throw new RpcError("BAD_REQUEST", { message: `No channel matches "${channel}"` });
      hub.publish(channel, event, parseEvent(matched, event, payload, maxPayloadBytes));
    },
    stats() {
      return { transport: hub.busKind, connections: connections.all.size, published: hub.counters.published, delivered: hub.counters.delivered, channels: hub.rooms() };
    },
  } as ChannelsService;
}
