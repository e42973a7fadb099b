import { createRouterClient, type AnyProcedure } from "@orpc/server";
import type { LiveChange } from "./db/live-index.js";
import type { HttpMiddleware } from "./middleware.js";
import { chain, promised, type Answer } from "./request/chain.js";
import type { OrderedPlugin } from "./order.js";
import { TIER, type RouteDefinition, type TieredRouter } from "./router.js";
import { REQUEST_ID_HEADER, RequestEvent, withHeader, type RequestFacts } from "./event.js";
import { withHeaders } from "./request/response-headers.js";
import { resolveSession, type SessionResolver, type SessionState } from "./request/session.js";
import { RpcError, errorResponse, type ErrorSource, type OnError } from "./errors.js";
import { unavailable, UNAVAILABLE_MESSAGES } from "./lifecycle/availability.js";
import { createRpcHandler } from "./rpc.js";
import { RESPOND, responseOf, type Respond } from "./request/respond.js";
import { REQUEST_EVENT, callProcedure, gateInterceptor, judgeSchemaError, toRpcError, type ErrorRules } from "./gate.js";
import { logRequest } from "./log/request-line.js";
import { clientScopeInterceptor, inClientScope } from "./request/scope.js";
import type { Logger } from "./log/logger.js";
import { overview, type AppOverview } from "./introspection/overview.js";
import type { AppMigrator } from "./db/migrator.js";
import { Readiness } from "./lifecycle/readiness.js";
import { describeKernel, type KernelDescription } from "./introspection/describe.js";
import type { ServiceRegistry } from "./services.js";
import { nestProcedures } from "./tree.js";
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
export type { KernelDescription };

/** A built kernel: request handling, the in-process client and shutdown. */
export class Running {
  readonly built: BuiltKernel;
  readonly #onError: OnError;
  readonly #logger: Logger | undefined;
  readonly #resolver: SessionResolver<RequestEvent> | undefined;
  readonly #contextHook: boolean;
  readonly #rpcFastPath: RouteDefinition | undefined;
  readonly #schema: SchemaModel;
  readonly #rules: ErrorRules;
  /** Body limits of procedures that set one (`meta({ bodyLimit })`), by their `/rpc` path. */
  readonly #rpcBodyLimits = new Map<string, number>();
  /** Setup (waited for by requests) and the schema's state. */
  readonly #readiness: Readiness;
  /** Why a request was refused before it ran (setup failed, closed), for the chain that answers it. */
  readonly #refusals = new WeakMap<RequestEvent, unknown>();
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
    const readiness = (this.#readiness = new Readiness(kernel, store));
    this.#rules = {
      onError: this.#onError,
      schema: this.#schema,
      map: hooks.error.isUsed() ? (error) => hooks.error.call(error) : undefined,
      closed: () => this.#closed !== undefined,
      instrumentation: services.get("instrumentation") as never,
      schemaVerdict: () => readiness.schemaVerdict(),
    };
    const rpc = createRpcHandler(tree, this.#rules);
    for (const [name, procedure] of procedures) {
      const limit = (procedure["~orpc"].meta as { bodyLimit?: unknown } | undefined)?.bodyLimit;
      if (typeof limit === "number") this.#rpcBodyLimits.set(`/rpc/${name.replaceAll(".", "/")}`, limit);
    }
    if (hooks.changed.isUsed()) store.changes.listen((change) => hooks.changed.call(change));
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
    // A request refused before it could run still passes the middleware (CORS, rate-limit headers).
    const refuse = chain(middleware, (event) => this.#failure(this.#refusals.get(event), event));
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
      migrations: () => readiness.migrations(),
      state: () => readiness.state(),
      ready: () => readiness.settle(),
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
        const waiting = readiness.serving ? undefined : self.#available(event);
        result = waiting
          ? waiting.then(
              () => run(event),
              (refusal: unknown) => {
                self.#refusals.set(event, refusal);
                return refuse(event);
              },
            )
          : run(event);
      } catch (error) {
        return self.#finish(self.#failure(error, event), event, facts, started);
      }
      if (result instanceof Promise) {
        return result.then(
          (response) => self.#finish(response, event, facts, started),
          (error: unknown) => {
            const judged = judgeSchemaError(error, self.#rules, event.isRpc ? "rpc" : "route", event);
            if (judged) return judged.then((mapped) => self.#finish(errorResponse(mapped, event.isRpc), event, facts, started));
            return self.#finish(self.#failure(error, event), event, facts, started);
          },
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
              await readiness.whenReady(self.#onError, "rpc");
              const resolved = typeof headers === "function" ? await headers() : headers;
              const event = self.#event(new Request("http://trellis.internal/", { headers: resolved }));
              return inClientScope(await self.createContext(event), event);
            } catch (error) {
              throw toRpcError(error, self.#rules, "rpc");
            }
          },
          interceptors: [gateInterceptor(self.#rules, "rpc"), clientScopeInterceptor],
        }),
      migrator: readiness.migrator,
      sealed,
      router: tree,
      db: store.db,
      ready: () => readiness.ready(),
      close: () => self.close(),
      describe: () => describeKernel(kernel, ordered, router, procedures),
      overview: () => overview(kernel, ordered, router, procedures.size, readiness.applied),
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
        if (!this.#readiness.serving) await this.#readiness.whenReady(this.#onError, options.source);
        context = await this.createContext(options.event ?? this.#event(new Request("http://trellis.internal/", { headers: options.headers })));
      } catch (error) {
        throw toRpcError(error, this.#rules, options.source, options.event);
      }
    }
    return callProcedure(procedure, name.split("."), input, this.#rules, { ...options, context });
  }

  /**
   * Before a request while the app is not set up: routes marked `beforeReady` (the health probe)
   * answer for themselves; every other request waits for setup, or gets a 503 that says why.
   */
  #available(event: RequestEvent): Promise<void> | void {
    const match = this.router.match(event.method, event.path);
    if (typeof match === "object" && match.route.beforeReady) return;
    return this.#readiness.whenReady(this.#onError, event.isRpc ? "rpc" : "route", event);
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
    this.#readiness.close();
    return (this.#closed ??= (async () => {
      // Every plugin releases what it holds, whichever failed before it (a tapable series stops at the first).
      const failures: unknown[] = [];
      // In tapable's order; a hook that throws before returning its promise counts as failed too.
      for (const tap of this.kernel.hooks.close.taps) await Promise.resolve().then(tap.fn as () => Promise<void>).catch((error: unknown) => failures.push(error));
      await this.store.close();
      if (failures.length > 0) throw failures[0];
    })());
  }
}

/** A kernel-answered error (404, 405) as the response middleware sees: the RPC envelope under /rpc. */
function answer(error: RpcError<string, unknown>, event: RequestEvent): Response {
  // Kept on the event for the request's log line, as the gate keeps the errors it maps.
  event.error = error;
  return errorResponse(error, event.isRpc);
}
