import { definePlugin, type AppPlugin, type SealedApp, RequestEvent } from "../../kernel/index.js";
import { localBus, postgresBus, redisBus, createPayloadTable, type Bus } from "./bus.js";
import type { ConnectionDeps } from "./connection.js";
import { Hub } from "./hub.js";
import { channelSettings, type ChannelDefinitions, type ChannelsConfig } from "./options.js";
import { compilePatterns } from "./patterns.js";
import { Connections } from "./registry.js";
import { channelsService, type ChannelsService } from "./service.js";
import { socketService, type ChannelSocketService } from "./socket.js";
import { sseRoutes } from "./sse.js";
import { channelMetrics } from "./metrics.js";
import { channelsAdminSection } from "./admin.js";
import { messageSpans } from "./tracing.js";
import { checkChanges, publishChanges } from "./changes.js";

export type { ChannelChange, ChannelDefinition, ChannelDefinitions, DeclaredChannels, ChannelRule, ChannelRuleArgs, ChannelsConfig, ChannelLimits, ChannelParams, ChannelName, RedisLike } from "./options.js";
export type { ChannelsService, ChannelStats } from "./service.js";
export type { AdminChannelsRouter } from "./admin.js";
export type { ChannelSocketService, SocketPeer } from "./socket.js";
export type { ClientFrame, ServerFrame, PresenceFrame } from "./frames.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Realtime channels: `context.channels.publish(channel, event, payload)`. */
    channels: ChannelsService;
    /** The socket endpoint a runtime preset mounts on its server's upgrade event. */
    "channel-sockets": ChannelSocketService;
  }
}

/** The NOTIFY channel and Redis channel messages cross replicas on. */
const BUS_CHANNEL = "trellis_channels";

/**
 * Realtime channels: broadcast and presence on named channels (`"room:{roomId}"`), joined and
 * sent on under rules in the procedures' vocabulary, over one WebSocket per client (mounted by
 * `serve()`) or an SSE stream with POSTed frames; across replicas through Redis pub/sub when given
 * a client, else PostgreSQL LISTEN/NOTIFY when the database listens. Stage `feature`: its service
 * exists before user plugins build, so their procedures, jobs and hooks can publish.
 */
export function channelsPlugin(definitions: ChannelDefinitions, config: ChannelsConfig & { origins?: readonly string[] } = {}): AppPlugin {
  const settings = channelSettings(config);
  const patterns = compilePatterns(definitions);
  return definePlugin({
    name: "channels",
    stage: "feature",
    optionalDependencies: ["telemetry"],
    provides: ["channels", "admin-section:channels"],
    validate(ctx) {
      if (patterns.some(({ definition }) => [definition.join ?? "authenticated", definition.send ?? definition.join ?? "authenticated"].some((rule) => rule !== "public" && rule !== false))) {
        ctx.requireSession("channels whose join or send rule is not \"public\"");
      }
      checkChanges(patterns, ctx.schema);
    },
    build(ctx) {
      const { db, live, kind } = ctx.resources;
      const bus: Bus = settings.redis
        ? redisBus(settings.redis, `trellis:channels:${ctx.resources.name}`)
        : kind === "postgres" && live?.listen
          ? postgresBus(db, live, BUS_CHANNEL)
          : localBus();
      const telemetry = ctx.want("telemetry");
      const hub = new Hub({ bus, flushMs: settings.presenceFlushMs, heartbeatMs: settings.heartbeatMs, onError: (error) => ctx.report(error, "route"), span: messageSpans(telemetry) });
      const connections = new Connections({ heartbeatMs: settings.heartbeatMs, revalidateMs: settings.revalidateMs, perCaller: settings.limits.connectionsPerCaller });
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      const deps: ConnectionDeps = {
        hub,
        patterns,
        settings,
        refresh: (headers) => sealed!.createContext(new RequestEvent(new Request("http://trellis.internal/", { headers }))),
        onClose: (connection) => connections.remove(connection),
      };
      const service = channelsService(hub, patterns, connections, settings.limits.maxPayloadBytes);
      ctx.provide("channels", service, { context: true });
      ctx.provide("admin-section:channels", channelsAdminSection(service));
      ctx.provide(
        "channel-sockets",
        socketService({ path: settings.path, maxFrameBytes: settings.limits.maxPayloadBytes * 2 + 65_536, origins: config.origins ?? [], connections, deps: () => deps, sealed: () => sealed! }),
      );
      if (telemetry) channelMetrics(telemetry, service);
      const onChange = publishChanges(patterns, hub);
      if (onChange) ctx.hooks.changed.tap(onChange);
      ctx.hooks.ready.tap(async () => {
        // The table for large messages, before any is sent (an app that never migrates still gets it).
        if (bus.kind === "postgres") await createPayloadTable(db);
        await hub.start();
        connections.start();
      });
      ctx.hooks.close.tap(async () => {
        await connections.stop();
        await hub.close();
      });
      return { routes: sseRoutes({ path: settings.path, connections, deps: () => deps, bufferBytes: settings.limits.sendBufferBytes }) };
    },
  });
}
