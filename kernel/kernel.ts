/**
 * The Trellis kernel. Invariants:
 * - Plugins are registered with `use()` in any order; their order is resolved once, at `build()`,
 *   by dependencies, then stage, then registration order.
 * - `configure`, `validate` and `build` are synchronous; asynchronous setup runs in the `ready` hook,
 *   memoised and awaited before the first request, `client()` call or migration.
 * - After `build()` nothing can be registered.
 * - The session is resolved at most once per request and only when the request carries a credential.
 * - A deliberate `RpcError` never reaches `onError`; every unexpected failure does, with its source.
 */
import { createRouterClient, type AnyProcedure } from "@orpc/server";
import type { Migrator } from "kysely";
import { createKernelHooks, describeHooks, pluginHooks, type KernelHooks } from "./hooks.js";
import { compose, type HttpMiddleware } from "./middleware.js";
import { resolveOrder, type OrderedPlugin } from "./order.js";
import { TieredRouter, type RouteDefinition } from "./router.js";
import { RequestEvent, withHeaders } from "./event.js";
import { resolveSession, type SessionResolver, type SessionState } from "./session.js";
import { RpcError, TrellisError, defaultOnError, errorResponse, report, type ErrorSource, type OnError } from "./errors.js";
import { createRpcHandler, errorInterceptor, toRpcError, type ErrorRules } from "./rpc.js";
import { assertProcedureName, flattenProcedures, nestProcedures } from "./tree.js";
import { rootBuilder } from "./procedure.js";
import { STAGES } from "./stages.js";
import { openDatastore, type Datastore } from "./datastore.js";
import type { AppPlugin, PluginContext, PluginResources, ProcedureTree } from "./plugin.js";
import type { AppRpcContext } from "./context.js";
import type { AppKV, AppSecrets, AppStorage, DatabaseConfig } from "./resources.js";
import type { SchemaModel } from "./schema/model.js";
import type { SealedApp } from "./sealed.js";
import type { AppDatabase } from "./db/database.js";

export interface KernelOptions {
  /** Display name: the OpenAPI title and what `_admin.meta` reports. */
  name?: string;
  /** Public origin of the app. */
  baseUrl?: string;
  db: DatabaseConfig;
  storage?: AppStorage;
  secrets?: AppSecrets<any>;
  kv?: AppKV;
  /**
   * Called for unexpected failures only.
   * @default logs to the console
   */
  onError?: OnError;
}

/** Route tiers: the first that matches wins. */
const TIER = { user: 0, plugin: 1, rpc: 2 } as const;
const EMPTY_SCHEMA: SchemaModel = Object.freeze({ version: "0", tables: {}, relations: {} });

export interface BuiltKernel {
  handle(request: Request): Promise<Response>;
  client(headers?: ClientHeaders): any;
  readonly migrator: Migrator;
  readonly router: ProcedureTree;
  readonly db: AppDatabase<any>;
  /** Runs the `ready` hook (memoised). */
  ready(): Promise<void>;
  close(): Promise<void>;
  describe(): KernelDescription;
}

export type ClientHeaders = HeadersInit | (() => HeadersInit | Promise<HeadersInit>);

export interface KernelDescription {
  plugins: { name: string; stage: string; dependencies: string[] }[];
  hooks: Record<string, string[]>;
  routes: readonly { tier: number; method: string; path: string }[];
  procedures: string[];
}

export class Kernel {
  readonly hooks: KernelHooks = createKernelHooks();
  readonly options: KernelOptions;
  readonly #plugins: AppPlugin[] = [];
  readonly #schemas: SchemaModel[] = [];
  readonly #procedures = new Map<string, AnyProcedure>();
  readonly #routes: RouteDefinition[] = [];
  readonly #sessionReasons: string[] = [];
  readonly #provided = new Map<string, unknown>();
  #built = false;

  constructor(options: KernelOptions) {
    this.options = options;
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
    if (name === "_admin" || name.startsWith("_admin.")) {
      throw new TrellisError("KERNEL_RESERVED_NAME", `Procedure "${name}" uses the reserved "_admin" namespace`);
    }
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
    const store = openDatastore(this.options.db, this.#schemas);
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
      problems.push(
        new TrellisError("KERNEL_AUTH_REQUIRED", `These need a signed-in session, so call .auth(): ${this.#sessionReasons.join("; ")}`, {
          hook: "validate",
        }),
      );
    }
    // One problem keeps its own code; several are listed together so one build shows them all.
    if (problems.length === 1) throw problems[0];
    if (problems.length > 1) {
      const lines = problems.map((problem) => `${problem.plugin ?? "kernel"}: ${problem.message}`);
      throw new TrellisError("KERNEL_VALIDATION_FAILED", `Cannot build:\n${lines.join("\n")}`, { hook: "validate", cause: problems });
    }

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
        if (this.#procedures.has(name)) {
          throw new TrellisError("KERNEL_DUPLICATE_PROCEDURE", `Plugin "${plugin.name}" registers "${name}", which already exists`, {
            plugin: plugin.name,
            hook: "build",
          });
        }
        this.#procedures.set(name, procedure);
      }
      for (const route of result.routes ?? []) router.add(TIER.plugin, route);
      middleware.push(...(result.middleware ?? []));
    }
    return new Running(this, ordered, store, router, middleware, this.#procedures, this.#provided).built;
  }

  #pluginContext(entry: OrderedPlugin, ordered: OrderedPlugin[], store: Datastore): PluginContext {
    const { plugin } = entry;
    const provided = this.#provided;
    const options = this.options;
    const resources: PluginResources = Object.freeze({
      db: store.db,
      kind: options.db.kind,
      name: options.name ?? "trellis",
      baseUrl: options.baseUrl,
      storage: options.storage,
      secrets: options.secrets,
      kv: options.kv,
      get auth() {
        return provided.get("auth");
      },
    });
    const declared = new Set(plugin.dependencies ?? []);
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
      provide: (key: string, value: unknown) => provided.set(key, value),
      report: (error: unknown, source: ErrorSource) => report(options.onError ?? defaultOnError, error, source),
      need: <T>(key: string): T => {
        const owner = ordered.find((o) => o.plugin.provides?.includes(key));
        if (owner && !declared.has(owner.plugin.name) && owner.plugin.name !== plugin.name) {
          throw new TrellisError("KERNEL_UNDECLARED_DEPENDENCY", `Plugin "${plugin.name}" reads "${key}" from "${owner.plugin.name}" without declaring it as a dependency`, { plugin: plugin.name });
        }
        if (!provided.has(key)) throw new TrellisError("KERNEL_NOT_PROVIDED", `Nothing provides "${key}" to plugin "${plugin.name}"`, { plugin: plugin.name });
        return provided.get(key) as T;
      },
    });
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

/** A built kernel: request handling, the in-process client and shutdown. */
class Running {
  readonly built: BuiltKernel;
  readonly #onError: OnError;
  readonly #resolver: SessionResolver | undefined;
  readonly #contextHook: boolean;
  readonly #rpcFastPath: RouteDefinition | undefined;
  readonly #schema: SchemaModel;
  readonly #rules: ErrorRules;
  #ready: Promise<void> | undefined;
  #isReady = false;
  #closed: Promise<void> | undefined;

  constructor(
    readonly kernel: Kernel,
    readonly ordered: OrderedPlugin[],
    readonly store: Datastore,
    readonly router: TieredRouter,
    middleware: HttpMiddleware[],
    procedures: ReadonlyMap<string, AnyProcedure>,
    readonly provided: ReadonlyMap<string, unknown>,
  ) {
    const { hooks, options } = kernel;
    this.#onError = options.onError ?? defaultOnError;
    this.#resolver = hooks.session.isUsed() ? (event) => hooks.session.promise(event) : undefined;
    this.#contextHook = hooks.context.isUsed();
    const tree = nestProcedures(procedures);
    this.#schema = kernel.schemas.at(-1) ?? EMPTY_SCHEMA;
    this.#rules = {
      onError: this.#onError,
      schema: this.#schema,
      map: hooks.error.isUsed() ? (error) => hooks.error.call(error) : undefined,
    };
    const rpc = createRpcHandler(tree, this.#rules);
    // POST only: the RPC protocol never needs another method, and a HEAD or OPTIONS that ran a
    // procedure would slip past the origin check and CORS preflights.
    const rpcRoute: RouteDefinition = {
      method: "POST",
      path: "/rpc/**",
      handler: async (event, context) => {
        const { matched, response } = await rpc.handle(event.request, { prefix: "/rpc", context });
        if (!matched) throw new RpcError("NOT_FOUND", { message: `No procedure at ${event.path}` });
        return response;
      },
    };
    // Most traffic is RPC: when no user or plugin route could shadow /rpc/**, skip the tier lookup.
    this.#rpcFastPath = router.ownsPrefix(TIER.rpc, "/rpc/**") ? rpcRoute : undefined;
    router.add(TIER.rpc, rpcRoute);
    const chain = compose(middleware, (event) => this.#dispatch(event));
    const sealed: SealedApp = Object.freeze({
      name: options.name ?? "trellis",
      baseUrl: options.baseUrl,
      router: tree,
      procedures,
      schema: kernel.schemas.at(-1) ?? EMPTY_SCHEMA,
      createContext: async (event: RequestEvent) => this.createContext(event),
      onError: this.#onError,
    });
    hooks.sealed.call(sealed);

    const self = this;
    this.built = Object.freeze({
      handle: async (request: Request) => {
        const event = new RequestEvent(request);
        let response: Response;
        try {
          if (!self.#isReady) await self.ready();
          response = await chain(event);
        } catch (error) {
          response = self.#failure(error, event);
        }
        return event.hasResponseHeaders ? withHeaders(response, event.responseHeaders) : response;
      },
      client: (headers?: ClientHeaders) =>
        createRouterClient(tree, {
          context: async () => {
            // Resolved by oRPC outside the interceptors: map failures here so callers get an RpcError.
            try {
              await self.ready();
              const resolved = typeof headers === "function" ? await headers() : headers;
              return await self.createContext(new RequestEvent(new Request("http://trellis.internal/", { headers: resolved })));
            } catch (error) {
              throw toRpcError(error, self.#rules, "rpc");
            }
          },
          interceptors: [errorInterceptor(self.#rules, "rpc")],
        }),
      get migrator() {
        return store.migrator;
      },
      router: tree,
      db: store.db,
      ready: () => self.ready(),
      close: () => self.close(),
      describe: () => self.describe(procedures),
    });
  }

  ready(): Promise<void> {
    return (this.#ready ??= (async () => {
      try {
        await this.store.ready();
        await this.kernel.hooks.ready.promise();
        this.#isReady = true;
      } catch (error) {
        // Not memoised: a database that was down at the first request may be up at the next.
        this.#ready = undefined;
        throw error;
      }
    })());
  }

  createContext(event: RequestEvent): AppRpcContext | Promise<AppRpcContext> {
    const state = resolveSession(event, this.#resolver);
    return state instanceof Promise ? state.then((resolved) => this.#context(event, resolved)) : this.#context(event, state);
  }

  #context(event: RequestEvent, state: SessionState): AppRpcContext {
    const { options } = this.kernel;
    const context: AppRpcContext = {
      headers: event.headers,
      db: this.store.db,
      user: state.user,
      session: state.session,
    };
    const auth = this.provided.get("auth");
    if (auth !== undefined) context.auth = auth;
    if (options.storage) context.storage = options.storage;
    if (options.secrets) context.secrets = options.secrets;
    if (options.kv) context.kv = options.kv;
    if (this.#contextHook) this.kernel.hooks.context.call(context, event);
    return context;
  }

  async #dispatch(event: RequestEvent): Promise<Response> {
    let route: RouteDefinition;
    if (this.#rpcFastPath && event.method === "POST" && event.path.startsWith("/rpc/")) {
      route = this.#rpcFastPath;
    } else {
      const match = this.router.match(event.method, event.path);
      if (match === undefined) throw new RpcError("NOT_FOUND", { message: `No route for ${event.method} ${event.path}` });
      if (match === "method") throw new RpcError("METHOD_NOT_SUPPORTED", { status: 405, message: `${event.method} is not allowed on ${event.path}` });
      if (match.params) event.params = match.params;
      route = match.route;
    }
    let context: AppRpcContext | Promise<AppRpcContext> | undefined;
    if (route.context !== false) {
      context = this.createContext(event);
      if (context instanceof Promise) context = await context;
    }
    const result = await route.handler(event, context as AppRpcContext);
    if (result instanceof Response) return result;
    if (result === undefined) return new Response(null, { status: 204 });
    return Response.json(result);
  }

  #failure(error: unknown, event: RequestEvent): Response {
    const rpc = event.path === "/rpc" || event.path.startsWith("/rpc/");
    // Database constraint errors in routes map like in procedures; the rest is a reported 500.
    // Under /rpc a failure outside the procedure (a session lookup, say) is still the RPC surface's.
    return errorResponse(toRpcError(error, this.#rules, rpc ? "rpc" : "route"), rpc);
  }

  close(): Promise<void> {
    return (this.#closed ??= (async () => {
      try {
        await this.kernel.hooks.close.promise();
      } finally {
        await this.store.close();
      }
    })());
  }

  describe(procedures: ReadonlyMap<string, AnyProcedure>): KernelDescription {
    const stageName = (stage: number) => Object.entries(STAGES).find(([, value]) => value === stage)?.[0] ?? String(stage);
    return {
      plugins: this.ordered.map(({ plugin, stage }) => ({
        name: plugin.name,
        stage: stageName(stage),
        dependencies: [...(plugin.dependencies ?? [])],
      })),
      hooks: describeHooks(this.kernel.hooks),
      routes: this.router.list(),
      procedures: [...procedures.keys()],
    };
  }
}
