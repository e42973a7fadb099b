import { createRouterClient, type AnyProcedure } from "@orpc/server";
import type { LiveChange } from "./db/live-index.js";
import { describeHooks } from "./hooks.js";
import type { HttpMiddleware } from "./middleware.js";
import { chain, promised, type Answer } from "./request/chain.js";
import type { OrderedPlugin } from "./order.js";
import { TIER, type RouteDefinition, type TieredRouter } from "./router.js";
import { REQUEST_ID_HEADER, RequestEvent, withHeader, type RequestFacts } from "./event.js";
import { withHeaders } from "./request/response-headers.js";
import { resolveSession, type SessionResolver, type SessionState } from "./request/session.js";
import { RpcError, TrellisError, errorResponse, report, type ErrorSource, type OnError } from "./errors.js";
import { unavailable, UNAVAILABLE_MESSAGES, type AppState } from "./lifecycle/availability.js";
import { createRpcHandler } from "./rpc.js";
import { RESPOND, responseOf, type Respond } from "./request/respond.js";
import { REQUEST_EVENT, callProcedure, gateInterceptor, toRpcError, type ErrorRules } from "./gate.js";
import { logRequest } from "./log/request-line.js";
import type { Logger } from "./log/logger.js";
import { overview, type AppOverview } from "./introspection/overview.js";
import { appMigrator, type AppMigrator, type AppliedMigration } from "./db/migrator.js";
import { SchemaGate } from "./lifecycle/schema-gate.js";
import type { ServiceRegistry } from "./services.js";
import { nestProcedures } from "./tree.js";
import { STAGES } from "./stages.js";
import { EMPTY_SCHEMA, type SchemaModel } from "./schema/model.js";
import type { Datastore } from "./db/datastore.js";
import type { KernelView } from "./options.js";
import type { ProcedureTree } from "./tree.js";
import type { AppRpcContext } from "./context.js";
import type { SealedApp, SealedCallOptions } from "./sealed.js";
import type { AppDatabase } from "./db/database.js";

export interface BuiltKernel {
  /** The Fetch handler; `facts` carries what the transport knows (the client address). */
  handle(request: Request, facts?: RequestFacts): Promise<Response>;
  /** `handle()` answering at once when it can (see `RESPOND`). */
  readonly [RESPOND]: Respond;
  client(headers?: ClientHeaders): any;
  readonly migrator: AppMigrator;
  /** The finished app as plugins see it: the gate, migrations, services. */
  readonly sealed: SealedApp;
  readonly router: ProcedureTree;
  readonly db: AppDatabase<any>;
  /** Runs the `ready` hook (memoised). */
  ready(): Promise<void>;
  close(): Promise<void>;
  describe(): KernelDescription;
  /** What the app is, for the start banner: database, schema version, plugins, surfaces. */
  overview(): AppOverview;
}

export type ClientHeaders = HeadersInit | (() => HeadersInit | Promise<HeadersInit>);

export interface KernelDescription {
  plugins: { name: string; stage: string; dependencies: string[] }[];
  hooks: Record<string, string[]>;
  routes: readonly { tier: number; method: string; path: string }[];
  procedures: string[];
}

/** A built kernel: request handling, the in-process client and shutdown. */
export class Running {
  readonly built: BuiltKernel;
  readonly #onError: OnError;
  readonly #logger: Logger | undefined;
  /** Migrations the last run of the migrator applied (undefined before it ran). */
  #applied: readonly string[] | undefined;
  readonly #resolver: SessionResolver<RequestEvent> | undefined;
  readonly #contextHook: boolean;
  readonly #rpcFastPath: RouteDefinition | undefined;
  readonly #schema: SchemaModel;
  readonly #rules: ErrorRules;
  /** Body limits of procedures that set one (`meta({ bodyLimit })`), by their `/rpc` path. */
  readonly #rpcBodyLimits = new Map<string, number>();
  readonly #migrator: AppMigrator;
  /** Whether the database is at the latest schema version: requests wait for nothing and get 503 until it is. */
  readonly #schemaGate: SchemaGate;
  #ready: Promise<void> | undefined;
  #isReady = false;
  /** Ready and not closed: the one flag every request checks. */
  #serving = false;
  #setupFailed = false;
  /** Setup failures already reported, so concurrent requests waiting on one attempt report it once. */
  readonly #reported = new WeakSet<object>();
  #closed: Promise<void> | undefined;

  constructor(
    readonly kernel: KernelView,
    readonly ordered: OrderedPlugin[],
    readonly store: Datastore,
    readonly router: TieredRouter,
    middleware: HttpMiddleware[],
    procedures: ReadonlyMap<string, AnyProcedure>,
    readonly services: ServiceRegistry,
  ) {
    const { hooks, options } = kernel;
    this.#onError = kernel.onError;
    this.#logger = kernel.logger;
    this.#resolver = hooks.session.isUsed() ? (event) => hooks.session.promise(event) : undefined;
    this.#contextHook = hooks.context.isUsed();
    const tree = nestProcedures(procedures);
    this.#schema = kernel.schemas.at(-1) ?? EMPTY_SCHEMA;
    this.#rules = {
      onError: this.#onError,
      schema: this.#schema,
      map: hooks.error.isUsed() ? (error) => hooks.error.call(error) : undefined,
      closed: () => this.#closed !== undefined,
      instrumentation: services.get("instrumentation") as never,
    };
    const rpc = createRpcHandler(tree, this.#rules);
    for (const [name, procedure] of procedures) {
      const limit = (procedure["~orpc"].meta as { bodyLimit?: unknown } | undefined)?.bodyLimit;
      if (typeof limit === "number") this.#rpcBodyLimits.set(`/rpc/${name.replaceAll(".", "/")}`, limit);
    }
    if (hooks.changed.isUsed()) store.changes.listen((change) => hooks.changed.call(change));
    this.#schemaGate = new SchemaGate(() => store.migrator, () => (this.#serving = false));
    this.#migrator = this.#schemaGate.guard(appMigrator(
      () => store.migrator,
      () => this.ready(),
      () => store.checkHistory(),
      (applied) => {
        this.#applied = applied;
        return hooks.migrated.promise({ applied });
      },
    ));
    // POST only: the RPC protocol never needs another method, and a HEAD or OPTIONS that ran a
    // procedure would slip past the origin check and CORS preflights.
    const rpcRoute: RouteDefinition = {
      method: "POST",
      path: "/rpc/**",
      handler: (event, context) =>
        rpc.handle(event.request, { prefix: "/rpc", context }).then(({ matched, response }) => {
          return matched ? response : errorResponse(new RpcError("NOT_FOUND", { message: `No procedure at ${event.path}` }), true);
        }),
    };
    // Most traffic is RPC: when no user or plugin route could shadow /rpc/**, skip the tier lookup.
    this.#rpcFastPath = router.ownsPrefix(TIER.rpc, "/rpc/**") ? rpcRoute : undefined;
    router.add(TIER.rpc, rpcRoute, "rpc");
    const run = chain(middleware, (event) => this.#dispatch(event));
    const sealed: SealedApp = Object.freeze({
      name: options.name ?? "trellis",
      baseUrl: options.baseUrl,
      router: tree,
      procedures,
      schema: this.#schema,
      schemas: kernel.schemas,
      createContext: async (event: RequestEvent) => this.createContext(event),
      call: (name: string, input: unknown, callOptions: SealedCallOptions) => this.call(procedures, name, input, callOptions),
      toError: (error: unknown, source: ErrorSource, event?: RequestEvent) => toRpcError(error, this.#rules, source, event),
      migrations: () => this.migrations(),
      state: () => this.state(),
      ready: () => this.#settle(),
      publishChange: (change: LiveChange) => store.live.notify(change),
      liveStats: () => store.live.stats(),
      service: (key: string) => services.get(key) as never,
      onError: this.#onError,
      logger: this.#logger,
    });
    hooks.sealed.call(sealed);

    const self = this;
    // Synchronous as far as the request allows: a route that answers at once, with no middleware
    // acting on the request, is answered without a promise (the Node adapter then writes it at once).
    const respond = (request: Request, facts?: RequestFacts): Answer => {
      const event = self.#event(request, facts);
      event.served = true;
      const started = self.#logger ? performance.now() : 0;
      let result: Answer;
      try {
        const waiting = self.#serving ? undefined : self.#available(event);
        result = waiting ? waiting.then(() => run(event)) : run(event);
      } catch (error) {
        return self.#finish(self.#failure(error, event), event, facts, started);
      }
      if (result instanceof Promise) {
        return result.then(
          (response) => self.#finish(response, event, facts, started),
          (error: unknown) => self.#finish(self.#failure(error, event), event, facts, started),
        );
      }
      return self.#finish(result, event, facts, started);
    };
    this.built = Object.freeze({
      handle: (request: Request, facts?: RequestFacts) => {
        try {
          return promised(respond(request, facts));
        } catch (error) {
          return Promise.reject(error);
        }
      },
      [RESPOND]: respond,
      client: (headers?: ClientHeaders) =>
        createRouterClient(tree, {
          context: async () => {
            // Resolved by oRPC outside the interceptors: map failures here so callers get an RpcError.
            try {
              await self.#whenReady("rpc");
              const resolved = typeof headers === "function" ? await headers() : headers;
              return await self.createContext(self.#event(new Request("http://trellis.internal/", { headers: resolved })));
            } catch (error) {
              throw toRpcError(error, self.#rules, "rpc");
            }
          },
          interceptors: [gateInterceptor(self.#rules, "rpc")],
        }),
      migrator: this.#migrator,
      sealed,
      router: tree,
      db: store.db,
      ready: () => self.ready(),
      close: () => self.close(),
      describe: () => self.describe(procedures),
      overview: () => overview(kernel, this.ordered, router, procedures.size, this.#applied),
    });
  }

  #event(request: Request, facts?: RequestFacts): RequestEvent {
    const event = new RequestEvent(request, facts);
    event.resolver = this.#resolver;
    // The limit of what the request will reach, known before any middleware reads the body.
    if (this.#rpcBodyLimits.size > 0 && event.method === "POST" && event.path.startsWith("/rpc/")) event.bodyLimit = this.#rpcBodyLimits.get(event.path);
    else if (this.router.hasBodyLimits) event.bodyLimit = this.router.bodyLimitOf(event.method, event.path);
    return event;
  }

  /** The gate: one procedure, run as `/rpc` would run it, for any surface. */
  async call(procedures: ReadonlyMap<string, AnyProcedure>, name: string, input: unknown, options: SealedCallOptions): Promise<unknown> {
    const procedure = procedures.get(name);
    if (!procedure) throw new RpcError("NOT_FOUND", { message: `No procedure named "${name}"` });
    if (options.event) options.event.procedure = name;
    let context = options.context;
    if (!context) {
      try {
        if (!this.#serving) await this.#whenReady(options.source);
        context = await this.createContext(options.event ?? this.#event(new Request("http://trellis.internal/", { headers: options.headers })));
      } catch (error) {
        throw toRpcError(error, this.#rules, options.source, options.event);
      }
    }
    return callProcedure(procedure, name.split("."), input, this.#rules, { ...options, context });
  }

  async migrations(): Promise<AppliedMigration[]> {
    const all = await this.#migrator.getMigrations();
    const records = await this.store.versionRecords();
    const schemas = this.kernel.schemas;
    return all.flatMap((migration, index) => {
      if (!migration.executedAt) return [];
      const record = records.get(migration.name);
      return [{ name: migration.name, version: record?.version ?? schemas[index]?.version ?? migration.name, executedAt: migration.executedAt, checksum: record?.checksum }];
    });
  }

  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new TrellisError("KERNEL_CLOSED", "The app is closed: close() was called"));
    return (this.#ready ??= (async () => {
      try {
        await this.store.ready();
        await this.kernel.hooks.ready.promise();
        this.#isReady = true;
        this.#setupFailed = false;
        this.#serving = !this.#closed && this.#schemaGate.current;
      } catch (error) {
        // Not memoised: a database that was down at the first request may be up at the next.
        this.#ready = undefined;
        this.#setupFailed = true;
        throw error;
      }
    })());
  }

  state(): AppState {
    if (this.#closed) return "closed";
    if (this.#isReady) return this.#schemaGate.current ? "ready" : "starting";
    return this.#setupFailed && !this.#ready ? "failed" : "starting";
  }

  /**
   * Before a request while the app is not serving: routes marked `beforeReady` (the health probe)
   * answer for themselves; every other request waits for setup, or gets a 503 that says why.
   */
  #available(event: RequestEvent): Promise<void> | void {
    const match = this.router.match(event.method, event.path);
    if (typeof match === "object" && match.route.beforeReady) return;
    return this.#whenReady(event.isRpc ? "rpc" : "route", event);
  }

  /** Setup, then whether the schema is current; `state()` is exact once it settled. */
  async #settle(): Promise<void> {
    await this.ready();
    await this.#schemaGate.check();
  }

  /**
   * Setup, with its failure as the 503 a caller sees (the cause goes to `onError`, once per attempt),
   * then the schema: pending or running migrations are a 503 "starting", not a failure.
   */
  async #whenReady(source: ErrorSource, event?: RequestEvent): Promise<void> {
    if (this.#closed) throw unavailable(UNAVAILABLE_MESSAGES.closed);
    let current: boolean;
    try {
      await this.ready();
      current = await this.#schemaGate.check();
    } catch (error) {
      if (this.#closed) throw unavailable(UNAVAILABLE_MESSAGES.closed);
      if (typeof error !== "object" || error === null || !this.#reported.has(error)) {
        if (typeof error === "object" && error !== null) this.#reported.add(error);
        report(this.#onError, error, source, event);
      }
      throw unavailable(UNAVAILABLE_MESSAGES.setup);
    }
    if (!current) throw unavailable(UNAVAILABLE_MESSAGES.starting);
    this.#serving = !this.#closed && this.#schemaGate.current;
  }

  createContext(event: RequestEvent): AppRpcContext | Promise<AppRpcContext> {
    const state = resolveSession(event, this.#resolver);
    return state instanceof Promise ? state.then((resolved) => this.#context(event, resolved)) : this.#context(event, state);
  }

  #context(event: RequestEvent, state: SessionState): AppRpcContext {
    const context: AppRpcContext = {
      headers: event.headers,
      db: this.store.db,
      user: state.user,
      session: state.session,
    };
    // The request it serves, so a failure deep in a procedure is reported with the request's id.
    if (event.served) (context as unknown as Record<symbol, RequestEvent>)[REQUEST_EVENT] = event;
    // Services provided with `{ context: true }` (the app's storage, secrets and kv; the auth instance ...).
    for (const [key, value] of this.services.contextEntries()) (context as unknown as Record<string, unknown>)[key] = value;
    if (this.#contextHook) this.kernel.hooks.context.call(context, event);
    return context;
  }

  // Promise chains rather than async functions on this path: every request passes here, and each
  // async frame is another promise to allocate and settle.
  #dispatch(event: RequestEvent): Answer {
    let route: RouteDefinition;
    if (this.#rpcFastPath && event.method === "POST" && event.path.startsWith("/rpc/")) {
      route = this.#rpcFastPath;
    } else {
      const match = this.router.match(event.method, event.path);
      // Answered, not thrown, so every HTTP middleware sees the 404 or 405 as a response.
      if (match === undefined) return answer(new RpcError("NOT_FOUND", { message: `No route for ${event.method} ${event.path}` }), event);
      if (match === "method") return answer(new RpcError("METHOD_NOT_SUPPORTED", { status: 405, message: `${event.method} is not allowed on ${event.path}` }), event);
      if (match.params) event.params = match.params;
      event.route = (route = match.route).path;
    }
    if (route.context === false) return responseOf(route.handler(event, undefined as unknown as AppRpcContext));
    const context = this.createContext(event);
    if (context instanceof Promise) return context.then((resolved) => responseOf(route.handler(event, resolved)));
    return responseOf(route.handler(event, context));
  }

  /** Every answer's last step: the shutdown's 503, the request id, the log line. */
  #finish(answer: Response, event: RequestEvent, facts: RequestFacts | undefined, started: number): Response {
    let response = answer;
    // A request still running when close() began fails with the database it lost: that is the
    // shutdown, whatever the surface made of it (the auth library answers its own bare 500).
    if (this.#closed && response.status >= 500 && response.status !== 503) response = this.#failure(unavailable(UNAVAILABLE_MESSAGES.closed), event);
    // Every answer (errors too) carries the request id, unless middleware set its own.
    // Under serve() the id goes on Node's response, leaving a plain Response on the adapter's fast path.
    if (!event.hasResponseHeaders && facts?.response) facts.response.setHeader(REQUEST_ID_HEADER, event.requestId);
    else if (!event.hasResponseHeaders) response = withHeader(response, REQUEST_ID_HEADER, event.requestId);
    else {
      if (!event.responseHeaders.has(REQUEST_ID_HEADER)) event.responseHeaders.set(REQUEST_ID_HEADER, event.requestId);
      response = withHeaders(response, event.responseHeaders);
    }
    if (this.#logger) logRequest(this.#logger, event, response.status, performance.now() - started);
    return response;
  }

  #failure(error: unknown, event: RequestEvent): Response {
    // Database constraint errors in routes map like in procedures; the rest is a reported 500.
    // Under /rpc a failure outside the procedure (a session lookup, say) is still the RPC surface's.
    return errorResponse(toRpcError(error, this.#rules, event.isRpc ? "rpc" : "route", event), event.isRpc);
  }

  close(): Promise<void> {
    this.#serving = false;
    return (this.#closed ??= (async () => {
      // Every plugin releases what it holds, whichever failed before it (a tapable series stops at the first).
      const failures: unknown[] = [];
      // In tapable's order; a hook that throws before returning its promise counts as failed too.
      for (const tap of this.kernel.hooks.close.taps) await Promise.resolve().then(tap.fn as () => Promise<void>).catch((error: unknown) => failures.push(error));
      await this.store.close();
      if (failures.length > 0) throw failures[0];
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

/** A kernel-answered error (404, 405) as the response middleware sees: the RPC envelope under /rpc. */
function answer(error: RpcError<string, unknown>, event: RequestEvent): Response {
  // Kept on the event for the request's log line, as the gate keeps the errors it maps.
  event.error = error;
  return errorResponse(error, event.isRpc);
}
