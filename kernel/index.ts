/**
 * `trellis/kernel`: the public API for plugin and preset authors. First-party plugins import only
 * from here, exactly as a third-party plugin would.
 */
export { Kernel, type KernelOptions, type BuiltKernel, type KernelDescription, type ClientHeaders } from "./kernel.js";
export { STAGES, type StageName } from "./stages.js";
export { definePlugin, type AppPlugin, type PluginContext, type PluginResult, type PluginResources, type ProcedureTree } from "./plugin.js";
export type { PluginHooks, KernelHooks } from "./hooks.js";
export type { SealedApp } from "./sealed.js";
export type { AppState } from "./lifecycle/availability.js";
export { RequestEvent } from "./event.js";
export type { HttpMiddleware } from "./middleware.js";
export { compose, type Answer } from "./request/chain.js";
export type { RouteDefinition, RouteHandler, RouteMethod } from "./router.js";
export type { AppRpcContext } from "./context.js";
export { carriesCredential, type SessionUser, type UserSession, type SessionState } from "./request/session.js";
export { RpcError, TrellisError, errorBody, errorResponse, type OnError, type ErrorSource, type ErrorInfo } from "./errors.js";
export { underTestRunner, type Logger, type LogFn, type LoggerOption } from "./log/logger.js";
export { redactPath, redactQuery, redactedQueryOf } from "./log/redact-url.js";
export type { AppOverview } from "./introspection/overview.js";
export { toRpcError, eventOf, type ErrorRules, type ErrorMapper } from "./gate.js";
export type { SealedCallOptions } from "./sealed.js";
export type { AppServices, ProvideOptions, ServiceOf } from "./services.js";
export type { ResourceInfo, ResourceRegistry, ResourceAction, ResourceWriteHooks } from "./registry.js";
export { attributeWrites, type ChangeEvent, type WriteActor, type WriteAttribution } from "./db/changes.js";
export { writeActor } from "./db/write-actor.js";
export { useWriteSetting, type WriteSetting } from "./db/write-setting.js";
export { runInRequest, requestInScope } from "./request/scope.js";
export { transactOnDemand } from "./db/database.js";
export type { MigratedInfo } from "./hooks.js";
export type { AppMigrator, AppliedMigration } from "./db/migrator.js";
export type { RequestFacts } from "./event.js";
export { RESPOND, type Respond } from "./request/respond.js";
// The one client-address rule: `serve()` decides with it, every plugin reads the result.
export { clientAddressRule, callerAddress, callerBucket, addressPrefix, isIpAddress, isLoopbackHost, type TrustProxy, type ClientAddressRule } from "./request/client-address.js";
export { liveIterable, type LiveIterableOptions } from "./stream/live-iterable.js";
export { isStreamProcedure } from "./stream/stream-procedure.js";
export { processEnv } from "./runtime/environment.js";
export {
  rootBuilder,
  hasRole,
  assertPermission,
  assertRole,
  permissionMiddleware,
  type ProcedureBase,
  type ProcedureMeta,
  type ProcedureOptions,
  type ProcedurePermission,
  type PermissionFn,
} from "./procedure.js";
export { accessMeta, declaredPermission, type AccessRule } from "./introspection/access.js";
export { BYTES_TYPE_ID, customJsonSerializers, toBase64, fromBase64 } from "./wire/custom-json.js";
export { rowDays, toPlainJson } from "./wire/plain-json.js";
export { compileRowEncoder, type RowEncoder } from "./wire/row-encoder.js";
export { escapeHtml } from "./wire/escape-html.js";
export { missingPeers, installLine, importPeer } from "./runtime/peers.js";
export { within } from "./runtime/within.js";
export { Instrumentation, observedStorage, type Observer, type SpanOptions, type StorageOperation, type Telemetry } from "./observe/index.js";
export type { AppKV, AppSecrets, AppStorage, DatabaseAbout, DatabaseConfig, DatabaseKind, LiveProvider } from "./contracts/resources.js";
export { readStream, writeStream, type ByteRange } from "./storage/streams.js";
export { isMemoryStorage } from "./storage/memory.js";
export { pgClientEnv } from "./db/pg-client-env.js";
export { mcp, type McpMeta, type McpTag, type McpToolOptions, type McpResourceOptions, type McpPromptOptions } from "./meta/mcp.js";
export type { RateLimitCharge, RateLimitHit, RateLimitStore } from "./kv/counter-store.js";
export type { AppDatabase } from "./db/database.js";
// The one walk of `where`'s boolean shape: a plugin that refuses a column reads what it yields.
export { whereColumns, whereRelations, type WhereColumn, type WhereRelation } from "./db/where-walk.js";
export type { QueryLimits } from "./db/query-limits.js";
export { primaryKeyOf, COLUMN_TYPES } from "./schema/model.js";
export type { SchemaModel, TableModel, ColumnModel, RelationModel, ColumnType } from "./schema/model.js";
// The value codec: one set of value rules for every family (what resources, admin and files store).
export { encodeValue, decodeRow, decodeValue, ValueError } from "./db/values.js";
export { MAX_JSON_DEPTH, nestedDeeperThan } from "./db/json-depth.js";
export { classifyDatabaseError } from "./db/errors.js";
export { rowSelection } from "./db/select-sql.js";
export { MAX_SEARCH_CHARS } from "./db/search-sql.js";
// Column-to-zod: input schemas from the schema model (resources, admin, OpenAPI and MCP share them).
export { columnInput, createInput, updateData, keyInput } from "./schema/zod.js";
