import type { AppRpcContext, ProcedureBase } from "../../kernel/index.js";
import type { ChannelsService, ChannelStats } from "./service.js";

/**
 * `_admin.channels.list`, behind the admin plugin's role check: what this process holds (its
 * connections, and per channel its members here and its presence keys across replicas), the
 * transport between replicas, and the messages published and delivered since start.
 */
export function channelsAdminSection(service: ChannelsService) {
  return (gated: ProcedureBase<AppRpcContext>) => channelProcedures(gated, service);
}

function channelProcedures(gated: ProcedureBase<AppRpcContext>, service: ChannelsService) {
  return {
    list: gated.handler((): ChannelStats => service.stats()),
  };
}

/** What `_admin.channels` holds, for a typed client. */
export type AdminChannelsRouter = ReturnType<typeof channelProcedures>;
