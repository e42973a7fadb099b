import { AsyncSeriesBailHook, AsyncSeriesHook, SyncBailHook, SyncHook } from "tapable";
import type { ORPCError } from "@orpc/server";
import type { AppRpcContext } from "./context.js";
import type { RequestEvent } from "./event.js";
import type { SessionState } from "./request/session.js";
import type { SealedApp } from "./sealed.js";
import type { ChangeEvent } from "./db/changes.js";

/** What the `migrated` hook receives: the migrations this run applied, in order (empty when none were pending). */
export interface MigratedInfo {
  applied: readonly string[];
}

/** The kernel's hooks. Only the kernel calls them; plugins tap them through `PluginHooks`. */
export interface KernelHooks {
  /** Resolves the caller's session; the auth plugin taps it. Called at most once per request. */
  readonly session: AsyncSeriesBailHook<[RequestEvent], SessionState | undefined>;
  /** Adds fields to every request context (after the session is resolved). */
  readonly context: SyncHook<[AppRpcContext, RequestEvent | undefined]>;
  /** Asynchronous setup, memoised and awaited before the first request, `client()` call or migration. */
  readonly ready: AsyncSeriesHook<[]>;
  /** The router is final: surfaces such as OpenAPI and MCP read it here. */
  readonly sealed: SyncHook<[SealedApp]>;
  /** Releases what plugins hold, at `close()`. */
  readonly close: AsyncSeriesHook<[]>;
  /** Maps a library's own deliberate errors to an `RpcError` (first answer wins); never called for `RpcError`s. */
  readonly error: SyncBailHook<[unknown], ORPCError<any, any> | undefined>;
  /** A write made through the app's database was committed (never for a rolled-back one). */
  readonly changed: SyncHook<[ChangeEvent]>;
  /** Migrations ran (successfully): plugins create triggers and other DDL of their own here. */
  readonly migrated: AsyncSeriesHook<[MigratedInfo]>;
}

export function createKernelHooks(): KernelHooks {
  return Object.freeze({
    session: new AsyncSeriesBailHook<[RequestEvent], SessionState | undefined>(["event"]),
    context: new SyncHook<[AppRpcContext, RequestEvent | undefined]>(["context", "event"]),
    ready: new AsyncSeriesHook<[]>([]),
    sealed: new SyncHook<[SealedApp]>(["app"]),
    close: new AsyncSeriesHook<[]>([]),
    error: new SyncBailHook<[unknown], ORPCError<any, any> | undefined>(["error"]),
    changed: new SyncHook<[ChangeEvent]>(["change"]),
    migrated: new AsyncSeriesHook<[MigratedInfo]>(["info"]),
  });
}

/**
 * What a plugin gets: tap-only facades, pre-named with the plugin and pre-staged, so a plugin can
 * extend the kernel but never call a hook, and cannot reorder itself with tapable's `before`.
 */
export interface PluginHooks {
  session: { tap(fn: (event: RequestEvent) => Promise<SessionState | undefined>): void };
  context: { tap(fn: (context: AppRpcContext, event: RequestEvent | undefined) => void): void };
  ready: { tap(fn: () => Promise<void>): void };
  sealed: { tap(fn: (app: SealedApp) => void): void };
  close: { tap(fn: () => Promise<void>): void };
  error: { tap(fn: (error: unknown) => ORPCError<any, any> | undefined): void };
  changed: { tap(fn: (change: ChangeEvent) => void): void };
  migrated: { tap(fn: (info: MigratedInfo) => Promise<void>): void };
}

export function pluginHooks(hooks: KernelHooks, name: string, stage: number): PluginHooks {
  const options = { name, stage };
  return Object.freeze({
    session: { tap: (fn) => hooks.session.tapPromise(options, fn) },
    context: { tap: (fn) => hooks.context.tap(options, fn) },
    ready: { tap: (fn) => hooks.ready.tapPromise(options, fn) },
    sealed: { tap: (fn) => hooks.sealed.tap(options, fn) },
    close: { tap: (fn) => hooks.close.tapPromise(options, fn) },
    error: { tap: (fn) => hooks.error.tap(options, fn) },
    changed: { tap: (fn) => hooks.changed.tap(options, fn) },
    migrated: { tap: (fn) => hooks.migrated.tapPromise(options, fn) },
  } satisfies PluginHooks);
}

/** The taps of each hook, in call order, for `kernel.describe()`. */
export function describeHooks(hooks: KernelHooks): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, hook] of Object.entries(hooks)) out[name] = hook.taps.map((tap: { name: string }) => tap.name);
  return out;
}
