import type { AnyProcedure } from "@orpc/server";
import type { HttpMiddleware } from "./middleware.js";
import type { RouteDefinition } from "./router.js";
import type { PluginHooks } from "./hooks.js";
import type { SchemaModel } from "./schema/model.js";
import type { AppDatabase } from "./db/database.js";
import type { ProcedureBase } from "./procedure.js";
import type { AppKV, AppSecrets, AppStorage, DatabaseKind, LiveProvider } from "./contracts/resources.js";
import type { ProvideOptions, ServiceOf } from "./services.js";
import type { ProcedureTree } from "./tree.js";

export type { ProcedureTree };


/** What a plugin's `build` contributes. */
export interface PluginResult {
  /** Procedures by name; dots in a key become path segments (`"post.list"` is `/rpc/post/list`). */
  procedures?: Record<string, AnyProcedure> | ProcedureTree;
  routes?: RouteDefinition[];
  middleware?: HttpMiddleware[];
}

/**
 * The shared, read-only resources of the app, as a plugin sees them (SPEC's bag). The database and
 * the app's identity are fixed; every other field is the service of that name (`auth`, `storage`,
 * `secrets`, `kv`, or any a plugin provides), read when asked.
 */
export interface PluginResources {
  readonly db: AppDatabase<any>;
  readonly kind: DatabaseKind;
  /** The database's live provider (`db.live`), read by live queries; undefined without one. */
  readonly live: LiveProvider | undefined;
  readonly name: string;
  readonly baseUrl: string | undefined;
  readonly storage: AppStorage | undefined;
  readonly secrets: AppSecrets | undefined;
  readonly kv: AppKV | undefined;
  /** The auth instance, once the auth plugin has built (undefined without `.auth()`). */
  readonly auth: unknown;
  /** The database's own liveness check (`DatabaseConfig.probe`), when it has one. */
  readonly probe: (() => Promise<void>) | undefined;
  /** The database's own backup (`DatabaseConfig.backup`), when it has one. */
  readonly backup: (() => Promise<Uint8Array>) | undefined;
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
  /**
   * Shares a named service with other plugins (the auth instance, the resource registry); with
   * `{ context: true }` it is also set on every request context as `context[key]`. Type it by
   * declaration merging into `AppServices`.
   */
  provide<K extends string>(key: K, value: ServiceOf<K>, options?: ProvideOptions): void;
  /** A service provided by the app or a declared dependency; throws naming the key when absent. */
  need<K extends string>(key: K): ServiceOf<K>;
  /** Like `need`, but undefined when nothing provides it (for optional dependencies). */
  want<K extends string>(key: K): ServiceOf<K> | undefined;
  /**
   * Reserves a procedure namespace (such as `_admin`) for this plugin: the build fails if anything
   * else registers a procedure under it.
   */
  reserve(namespace: string): void;
  /**
   * Reports an unexpected failure to the app's `onError` (never throws); with the request it
   * served, the report carries its id, method, path and procedure.
   */
  report(error: unknown, source: import("./errors.js").ErrorSource, event?: import("./event.js").RequestEvent): void;
  /** The app's logger (the `logger` option), undefined when logging is off. */
  readonly logger: import("./log/logger.js").Logger | undefined;
}

export interface AppPlugin {
  /** Unique, kebab-case. Registering the same name twice throws at `.use()`. */
  name: string;
  /** Plugins that must be registered and run before this one; checked at `.build()`. */
  dependencies?: readonly string[];
  /** Plugins this one runs after when they are registered; absent ones are no error. */
  optionalDependencies?: readonly string[];
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
