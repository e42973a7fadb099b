/** `trellis`: the root entry. Schema, secrets and storage members live on their own subpaths. */
export { App, type AppOptions } from "./app.js";
export { RpcError, liveIterable } from "../kernel/index.js";
export { mcp } from "../plugins/mcp/index.js";
export type { McpConfig } from "../plugins/mcp/index.js";
export type { OpenapiConfig } from "../plugins/openapi/index.js";
export type { BuiltApp, ClientOf, InferRouter, AppAdminRouter } from "./types.js";
export type { AdminConfig } from "../plugins/admin/index.js";
export type {
  AppRpcContext,
  AppPlugin,
  AppKV,
  AppSecrets,
  AppStorage,
  AppDatabase,
  PluginContext,
  PluginResult,
  SessionUser,
  UserSession,
  ProcedureOptions,
  ProcedurePermission,
  OnError,
  ErrorSource,
  ErrorInfo,
  Logger,
  LoggerOption,
  RouteDefinition,
  HttpMiddleware,
} from "../kernel/index.js";
export type { CorsConfig } from "../plugins/cors/index.js";
export type { JobsConfig, JobsService, JobDefinitionOptions, JobRun, JobInfo, SendOptions, JobRecord, JobState } from "../plugins/jobs/index.js";
export type { WebhooksConfig, WebhookEndpoint, WebhookEvent } from "../plugins/webhooks/index.js";
export {
  memoryRateLimitStore,
  type MemoryRateLimitStore,
  type MemoryRateLimitStoreOptions,
  type RateLimitConfig,
  type RateLimitHit,
  type RateLimitStore,
} from "../plugins/rate-limit/index.js";
