/**
 * The Trellis kernel. Invariants:
 * - Plugins are registered with `use()` in any order; their order is resolved once, at `build()`,
 *   by dependencies, then stage, then registration order.
 * - `configure`, `validate` and `build` are synchronous; asynchronous setup runs in the `ready` hook,
 *   memoised and awaited before the first request, `client()` call or migration.
 * - After `build()` nothing can be registered.
 * - The session is resolved at most once per request and only when the request carries a credential.
 * - A deliberate `RpcError` never reaches `onError`; every unexpected failure does, with its source.
 * - Every surface runs procedures through one gate (gate.ts), so a failure has one status everywhere.
 * - The kernel names no feature: plugins share what they offer as named services (services.ts).
 */
import type { AnyProcedure } from "@orpc/server";
import { createKernelHooks, pluginHooks, type KernelHooks } from "./hooks.js";
import type { HttpMiddleware } from "./middleware.js";
import { resolveOrder, type OrderedPlugin } from "./order.js";
import { TIER, TieredRouter, type RouteDefinition } from "./router.js";
import { TrellisError, defaultOnError, report, type ErrorSource, type OnError } from "./errors.js";
import { resolveLogger, type Logger } from "./log/logger.js";
import type { RequestEvent } from "./event.js";
import { assertProcedureName, flattenProcedures } from "./tree.js";
import { rootBuilder } from "./procedure.js";
import { openDatastore, type Datastore } from "./db/datastore.js";
import { throwProblems } from "./lifecycle/problems.js";
import { Running, type BuiltKernel } from "./running.js";
import { EMPTY_SCHEMA, type SchemaModel } from "./schema/model.js";
import { ServiceRegistry, type ServiceOf } from "./services.js";
import type { AppPlugin, PluginContext, PluginResources } from "./plugin.js";
import type { KernelOptions } from "./options.js";

export type { BuiltKernel, ClientHeaders, KernelDescription } from "./running.js";
export type { KernelOptions } from "./options.js";



export class Kernel {
  readonly hooks: KernelHooks = createKernelHooks();
  readonly options: KernelOptions;
  readonly #plugins: AppPlugin[] = [];
  readonly #schemas: SchemaModel[] = [];
  readonly #procedures = new Map<string, AnyProcedure>();
  readonly #routes: RouteDefinition[] = [];
  readonly #sessionReasons: string[] = [];
  readonly #services = new ServiceRegistry();
  /** Reserved procedure namespaces and the plugin that owns each. */
  readonly #reserved = new Map<string, string>();
  #built = false;
  /** The app's logger (undefined when logging is off). */
  readonly logger: Logger | undefined;
  /** `onError`, or the default that logs through `logger`. */
  readonly onError: OnError;

  constructor(options: KernelOptions) {
    this.options = options;
    this.logger = resolveLogger(options.logger);
    this.onError = options.onError ?? defaultOnError(this.logger);
    for (const [key, value] of Object.entries(options.services ?? {})) {
      if (value !== undefined) this.#services.provide("app", key, value, { context: true });
    }
  }

  /**
   * Reserves a procedure namespace for one plugin: procedures under it may only come from that
   * plugin's `build`. The facade reserves `_admin` for the admin plugin.
   */
  reserve(namespace: string, owner: string): this {
    this.#assertOpen("reserve");
    const existing = this.#reserved.get(namespace);
    if (existing && existing !== owner) {
      throw new TrellisError("KERNEL_RESERVED_NAME", `Namespace "${namespace}" is already reserved for "${existing}"`, { plugin: owner });
    }
    this.#reserved.set(namespace, owner);
    for (const name of this.#procedures.keys()) this.#assertNotReserved(name, undefined);
    return this;
  }

  #assertNotReserved(name: string, plugin: string | undefined): void {
    const namespace = name.split(".")[0]!;
    const owner = this.#reserved.get(namespace);
    if (owner === undefined || owner === plugin) return;
    throw new TrellisError("KERNEL_RESERVED_NAME", `Procedure "${name}" uses the reserved "${namespace}" namespace (it belongs to the "${owner}" plugin)`, {
      plugin,
      hook: plugin ? "build" : undefined,
    });
  }

  use(plugin: AppPlugin): this {
    this.#assertOpen("use");
    if (this.#plugins.some((existing) => existing.name === plugin.name)) {
      throw new TrellisError("KERNEL_DUPLICATE_PLUGIN", `A plugin named "${plugin.name}" is already registered`, {
        plugin: plugin.name,
        hook: "use",
      });
    }
    this.#plugins.push(plugin);
    try {
      plugin.configure?.();
    } catch (cause) {
      throw wrap(cause, plugin.name, "configure");
    }
    return this;
  }

  /** Registers a schema version: one migration step, in call order. */
  schema(model: SchemaModel): this {
    this.#assertOpen("schema");
    this.#schemas.push(model);
    return this;
  }

  /** Registers a procedure under a dotted name. `_admin` is reserved for the admin plugin. */
  procedure(name: string, procedure: AnyProcedure): this {
    this.#assertOpen("procedure");
    assertProcedureName(name);
    this.#assertNotReserved(name, undefined);
    if (this.#procedures.has(name)) throw new TrellisError("KERNEL_DUPLICATE_PROCEDURE", `Procedure "${name}" is already registered`);
    this.#procedures.set(name, procedure);
    return this;
  }

  /** Mounts a raw route; user routes are matched before every built-in. */
  route(route: RouteDefinition): this {
    this.#assertOpen("route");
    this.#routes.push(route);
    return this;
  }

  /** Declares that something needs a signed-in session (checked at build). */
  requireSession(reason: string): void {
    this.#sessionReasons.push(reason);
  }

  get plugins(): readonly AppPlugin[] {
    return this.#plugins;
  }

  get schemas(): readonly SchemaModel[] {
    return this.#schemas;
  }

  build(): BuiltKernel {
    this.#assertOpen("build");
    this.#built = true;
    const ordered = resolveOrder(this.#plugins);
    const store = openDatastore(this.options.db, this.#schemas, this.#services.get("instrumentation") as never);
    try {
      return this.#assemble(ordered, store);
    } catch (error) {
      // A build that fails releases the database it opened (an embedded one's thread and lock).
      void store.close().catch(() => {});
      throw error;
    }
  }

  #assemble(ordered: OrderedPlugin[], store: Datastore): BuiltKernel {
    const contexts = new Map(ordered.map((entry) => [entry.plugin.name, this.#pluginContext(entry, ordered, store)]));

    const problems: TrellisError[] = [];
    for (const { plugin } of ordered) {
      try {
        plugin.validate?.(contexts.get(plugin.name)!);
      } catch (cause) {
        problems.push(tagged(cause, plugin.name, "validate"));
      }
    }
    const sessionProvided = ordered.some(({ plugin }) => plugin.provides?.includes("session"));
    if (this.#sessionReasons.length > 0 && !sessionProvided) {
      const reasons = this.#sessionReasons.join("; ");
      problems.push(new TrellisError("KERNEL_AUTH_REQUIRED", `These need a signed-in session, so call .auth(): ${reasons}`, { hook: "validate" }));
    }
    throwProblems(problems);

    const router = new TieredRouter();
    for (const route of this.#routes) router.add(TIER.user, route);
    const middleware: HttpMiddleware[] = [];
    for (const { plugin } of ordered) {
      let result;
      try {
        result = plugin.build?.(contexts.get(plugin.name)!);
      } catch (cause) {
        throw wrap(cause, plugin.name, "build");
      }
      if (!result) continue;
      for (const [name, procedure] of flattenProcedures(result.procedures ?? {})) {
        assertProcedureName(name);
        this.#assertNotReserved(name, plugin.name);
        if (this.#procedures.has(name)) {
          throw new TrellisError("KERNEL_DUPLICATE_PROCEDURE", `Plugin "${plugin.name}" registers "${name}", which already exists`, {
            plugin: plugin.name,
            hook: "build",
          });
        }
        this.#procedures.set(name, procedure);
      }
      for (const route of result.routes ?? []) router.add(TIER.plugin, route, plugin.name);
      middleware.push(...(result.middleware ?? []));
    }
    return new Running(this, ordered, store, router, middleware, this.#procedures, this.#services).built;
  }

  #pluginContext(entry: OrderedPlugin, ordered: OrderedPlugin[], store: Datastore): PluginContext {
    const { plugin } = entry;
    const services = this.#services;
    const options = this.options;
    // SPEC's frozen bag: the database and the app's identity, then any service by its key (`auth`,
    // `storage`, `secrets`, `kv`, ...), read when asked so a service provided later is seen.
    const fixed: Record<string, unknown> = { db: store.db, kind: options.db.kind, live: options.db.live, probe: options.db.probe, backup: options.db.backup, name: options.name ?? "trellis", baseUrl: options.baseUrl };
    const resources = new Proxy(Object.freeze(fixed), {
      get: (target, key) => (typeof key === "string" && !(key in target) ? services.get(key) : Reflect.get(target, key)),
      has: (target, key) => key in target || (typeof key === "string" && services.has(key)),
    }) as unknown as PluginResources;
    const declared = new Set([...(plugin.dependencies ?? []), ...(plugin.optionalDependencies ?? [])]);
    const readable = (key: string) => {
      const owner = services.owner(key) ?? ordered.find((o) => o.plugin.provides?.includes(key))?.plugin.name;
      if (owner && owner !== "app" && owner !== plugin.name && !declared.has(owner)) {
        throw new TrellisError("KERNEL_UNDECLARED_DEPENDENCY", `Plugin "${plugin.name}" reads "${key}" from "${owner}" without declaring it as a dependency`, { plugin: plugin.name });
      }
    };
    return Object.freeze({
      name: plugin.name,
      resources,
      base: rootBuilder(),
      schemas: this.#schemas,
      schema: this.#schemas.at(-1) ?? EMPTY_SCHEMA,
      hooks: pluginHooks(this.hooks, plugin.name, entry.stage),
      plugins: ordered.map((o) => o.plugin.name),
      procedures: this.#procedures,
      requireSession: (reason: string) => this.requireSession(reason),
      reserve: (namespace: string) => {
        this.#reserved.set(namespace, plugin.name);
        for (const name of this.#procedures.keys()) this.#assertNotReserved(name, undefined);
      },
      provide: (key: string, value: unknown, provideOptions?: { context?: boolean }) => services.provide(plugin.name, key, value, provideOptions),
      report: (error: unknown, source: ErrorSource, event?: RequestEvent) => report(this.onError, error, source, event),
      logger: this.logger,
      need: <K extends string>(key: K): ServiceOf<K> => {
        readable(key);
        if (!services.has(key)) throw new TrellisError("KERNEL_NOT_PROVIDED", `Nothing provides "${key}" to plugin "${plugin.name}"`, { plugin: plugin.name });
        return services.get(key) as ServiceOf<K>;
      },
      want: <K extends string>(key: K): ServiceOf<K> | undefined => {
        readable(key);
        return services.get(key) as ServiceOf<K> | undefined;
      },
    }) as PluginContext;
  }

  #assertOpen(what: string): void {
    if (this.#built) throw new TrellisError("KERNEL_SEALED", `Cannot call ${what}() after build(): the app is already built`);
  }
}

/** A plugin's error with its plugin and hook attached (its own code kept when it has one). */
function tagged(cause: unknown, plugin: string, hook: string): TrellisError {
  if (cause instanceof TrellisError && cause.plugin) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = cause instanceof TrellisError ? cause.code : "KERNEL_PLUGIN_INVALID";
  return new TrellisError(code, message, { plugin, hook, cause });
}

function wrap(cause: unknown, plugin: string, hook: string): TrellisError {
  if (cause instanceof TrellisError) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new TrellisError("KERNEL_PLUGIN_FAILED", `Plugin "${plugin}" failed in ${hook}: ${message}`, { plugin, hook, cause });
}
