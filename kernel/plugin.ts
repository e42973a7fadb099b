import type { AnyProcedure } from "@orpc/server";
import type { HttpMiddleware } from "./middleware.js";
import type { RouteDefinition } from "./router.js";
import type { PluginHooks } from "./hooks.js";
import type { SchemaModel } from "./schema/model.js";
import type { AppDatabase } from "./db/database.js";
import type { ProcedureBase } from "./procedure.js";
import type { AppKV, AppSecrets, AppStorage, DatabaseKind } from "./resources.js";

/** A nested record of oRPC procedures: `{ post: { list: procedure } }` is served at `/rpc/post/list`. */
export interface ProcedureTree {
  [key: string]: AnyProcedure | ProcedureTree;
}

/** What a plugin's `build` contributes. */
export interface PluginResult {
  /** Procedures by name; dots in a key become path segments (`"post.list"` is `/rpc/post/list`). */
  procedures?: Record<string, AnyProcedure> | ProcedureTree;
  routes?: RouteDefinition[];
  middleware?: HttpMiddleware[];
}

/** The shared, read-only resources of the app, as a plugin sees them. */
export interface PluginResources {
  readonly db: AppDatabase<any>;
  readonly kind: DatabaseKind;
  readonly name: string;
  readonly baseUrl: string | undefined;
  readonly storage: AppStorage | undefined;
  readonly secrets: AppSecrets | undefined;
  readonly kv: AppKV | undefined;
  /** The auth instance, once the auth plugin has built (undefined without `.auth()`). */
  readonly auth: unknown;
}

export interface PluginContext {
  /** The plugin's own name. */
  readonly name: string;
  readonly resources: PluginResources;
  /** The oRPC base builder with the app context type. */
  readonly base: ProcedureBase<any>;
  /** Registered schema versions, in migration order. */
  readonly schemas: readonly SchemaModel[];
  /** The latest schema version (an empty one when none was registered). */
  readonly schema: SchemaModel;
  /** Kernel hooks this plugin may tap (never call). */
  readonly hooks: PluginHooks;
  /** The names of every registered plugin, in resolved order. */
  readonly plugins: readonly string[];
  /** Procedures registered so far (facade procedures and earlier plugins' results), by dotted name. */
  readonly procedures: ReadonlyMap<string, AnyProcedure>;
  /** Declares that something needs a signed-in session; `.build()` throws listing every reason when no plugin provides sessions. */
  requireSession(reason: string): void;
  /** Shares a value with later plugins (for example the auth instance). */
  provide(key: string, value: unknown): void;
  /** Reads a value provided by a declared dependency. */
  need<T = unknown>(key: string): T;
  /** Reports an unexpected failure to the app's `onError` (never throws). */
  report(error: unknown, source: import("./errors.js").ErrorSource): void;
}

export interface AppPlugin {
  /** Unique, kebab-case. Registering the same name twice throws at `.use()`. */
  name: string;
  /** Plugins that must be registered and run before this one; checked at `.build()`. */
  dependencies?: readonly string[];
  /**
   * Where the plugin sits on the stage ladder.
   * @default "user"
   */
  stage?: import("./stages.js").StageName;
  /** Capabilities this plugin offers other plugins, e.g. `"session"` for the auth plugin. */
  provides?: readonly string[];
  /** Runs at registration (`.use()`). */
  configure?(): void;
  /** Runs during `.build()`, after the kernel's own checks; read-only. Throw to refuse the build. */
  validate?(ctx: PluginContext): void;
  /** Runs during `.build()`; contributes procedures, routes and middleware. */
  build?(ctx: PluginContext): PluginResult | void;
}

/** Identity function that only helps inference. */
export function definePlugin<T extends AppPlugin>(plugin: T): T {
  return plugin;
}
