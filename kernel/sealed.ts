import type { AnyProcedure } from "@orpc/server";
import type { ORPCError } from "@orpc/server";
import type { ProcedureTree } from "./tree.js";
import type { AppRpcContext } from "./context.js";
import type { RequestEvent } from "./event.js";
import type { ErrorSource, OnError } from "./errors.js";
import type { SchemaModel } from "./schema/model.js";
import type { AppliedMigration } from "./db/migrator.js";
import type { ServiceOf } from "./services.js";
import type { AppState } from "./lifecycle/availability.js";
import type { Logger } from "./log/logger.js";
import type { LiveChange } from "./db/live-index.js";

/** How `sealed.call` learns who is calling: a request event, bare headers, or a context already built. */
export interface SealedCallOptions {
  /** The request the call serves: its session (memoised) and headers make the context. */
  event?: RequestEvent;
  /** Headers to build the context from when there is no event (a job, a test). */
  headers?: HeadersInit;
  /** A context already built for this caller (skips building one). */
  context?: AppRpcContext;
  /** The surface, for `onError`. */
  source: ErrorSource;
  signal?: AbortSignal;
  lastEventId?: string;
}

/** The finished app as surfaces (OpenAPI, REST, MCP, live) see it once every plugin has built. */
export interface SealedApp {
  readonly name: string;
  readonly baseUrl: string | undefined;
  /** The nested oRPC router served at `/rpc/**`. */
  readonly router: ProcedureTree;
  /** Every procedure by dotted name. */
  readonly procedures: ReadonlyMap<string, AnyProcedure>;
  /** The latest schema version. */
  readonly schema: SchemaModel;
  /** Every registered schema version, in migration order. */
  readonly schemas: readonly SchemaModel[];
  /** Builds the request context (session included) for a request. */
  createContext(event: RequestEvent): Promise<AppRpcContext>;
  /**
   * The gate: runs the procedure `name` with its middleware, permission, validation and the error
   * rules of `/rpc`, and resolves its output (an async iterator for a stream, whose errors are
   * mapped the same way). Rejects with an `RpcError` carrying the status `/rpc` would answer;
   * unexpected failures are reported to `onError` with `source` first.
   */
  call(name: string, input: unknown, options: SealedCallOptions): Promise<unknown>;
  /**
   * Maps any error to the `RpcError` a caller sees, reporting unexpected ones, exactly as `/rpc`
   * does; given the request, the report names it and its log line shows the error's message.
   */
  toError(error: unknown, source: ErrorSource, event?: RequestEvent): ORPCError<any, any>;
  /**
   * Tells live queries that a table changed outside this process (a live provider's notification,
   * another replica's write). Local writes through `db` need no call: they are tracked already.
   * With `op` and the written rows (`rows`, or `keys` for a delete), only the live queries those
   * rows can enter or leave re-run; with the table alone, every live query reading it does.
   */
  publishChange(change: LiveChange): void;
  /** Live queries open in this app: distinct queries, subscribers, and table watchers. */
  liveStats(): { queries: number; subscribers: number; watchers: number };
  /** Whether the app can serve now: `starting`, `ready`, `failed` (setup failed; retried when asked) or `closed`. */
  state(): AppState;
  /**
   * The app's setup (memoised once it succeeds, tried again after a failure), then a look at the
   * schema so `state()` is exact; rejects after `close()`.
   */
  ready(): Promise<void>;
  /** Applied migrations, oldest first. */
  migrations(): Promise<AppliedMigration[]>;
  /** A service by key (undefined when nothing provides it). */
  service<K extends string>(key: K): ServiceOf<K> | undefined;
  /** Reports an unexpected failure to `onError`. */
  readonly onError: OnError;
  /** The app's logger (the `logger` option), undefined when logging is off. */
  readonly logger: Logger | undefined;
}
