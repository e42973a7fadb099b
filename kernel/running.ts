import { createRouterClient, type AnyProcedure } from "@orpc/server";
import type { Migrator } from "kysely";
import { describeHooks } from "./hooks.js";
import { compose, type HttpMiddleware } from "./middleware.js";
import type { OrderedPlugin } from "./order.js";
import { TIER, type RouteDefinition, type TieredRouter } from "./router.js";
import { RequestEvent, withHeaders } from "./event.js";
import { resolveSession, type SessionResolver, type SessionState } from "./session.js";
import { RpcError, defaultOnError, errorResponse, type OnError } from "./errors.js";
import { createRpcHandler, errorInterceptor, toRpcError, type ErrorRules } from "./rpc.js";
import { nestProcedures } from "./tree.js";
import { STAGES } from "./stages.js";
import { EMPTY_SCHEMA, type SchemaModel } from "./schema/model.js";
import type { Datastore } from "./datastore.js";
import type { Kernel } from "./kernel.js";
import type { ProcedureTree } from "./plugin.js";
import type { AppRpcContext } from "./context.js";
import type { SealedApp } from "./sealed.js";
import type { AppDatabase } from "./db/database.js";

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

/** A built kernel: request handling, the in-process client and shutdown. */
export class Running {
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
      handler: (event, context) =>
        rpc.handle(event.request, { prefix: "/rpc", context }).then(({ matched, response }) => {
          if (!matched) throw new RpcError("NOT_FOUND", { message: `No procedure at ${event.path}` });
          return response;
        }),
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

  // Promise chains rather than async functions on this path: every request passes here, and each
  // async frame is another promise to allocate and settle.
  #dispatch(event: RequestEvent): Promise<Response> {
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
    if (route.context === false) return respond(route.handler(event, undefined as unknown as AppRpcContext));
    const context = this.createContext(event);
    if (context instanceof Promise) return context.then((resolved) => respond(route.handler(event, resolved)));
    return respond(route.handler(event, context));
  }

  #failure(error: unknown, event: RequestEvent): Response {
    // Database constraint errors in routes map like in procedures; the rest is a reported 500.
    // Under /rpc a failure outside the procedure (a session lookup, say) is still the RPC surface's.
    return errorResponse(toRpcError(error, this.#rules, event.isRpc ? "rpc" : "route"), event.isRpc);
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

/** A route handler's result as a response: a `Response` as is, `undefined` as 204, anything else as JSON. */
function respond(result: unknown): Promise<Response> {
  if (result instanceof Promise) return result.then(toResponse);
  return Promise.resolve(toResponse(result));
}

function toResponse(result: unknown): Response {
  if (result instanceof Response) return result;
  if (result === undefined) return new Response(null, { status: 204 });
  return Response.json(result);
}
