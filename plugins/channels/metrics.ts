import type { Telemetry } from "../../kernel/index.js";
import type { ChannelsService } from "./service.js";

/** `/metrics`: open connections and channels, read at scrape time, and the messages published and delivered. */
export function channelMetrics(telemetry: Telemetry, service: ChannelsService): void {
  const stats = () => service.stats();
  const gauge = (name: string, help: string, read: (s: ReturnType<typeof stats>) => number) =>
    telemetry.gauge({
      name,
      help,
      collect(this: { set(value: number): void }) {
        this.set(read(stats()));
      },
    } as never);
  gauge("trellis_channel_connections", "Open channel connections (sockets and SSE streams) in this process.", (s) => s.connections);
  gauge("trellis_channels_open", "Channels with at least one member in this process.", (s) => s.channels.length);
  gauge("trellis_channel_messages_published_total", "Channel messages published from this process (clients and the server).", (s) => s.published);
  gauge("trellis_channel_messages_delivered_total", "Channel messages handed to connections in this process.", (s) => s.delivered);
}
