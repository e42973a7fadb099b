// `trellis/embedded`: the zero-infrastructure database.
export { embedded } from "./embedded.js";
export type { EmbeddedClient, EmbeddedConfig, EmbeddedDatabase, EmbeddedLiveProvider, EmbeddedQueryClient, EmbeddedThread } from "./embedded.js";
export { restoreEmbedded, type RestoreOptions } from "./backup.js";
export { borrowEmbedded, hostEmbedded, unopenedEmbedded, type EmbeddedHost } from "./lend.js";
