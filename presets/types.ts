import type { AnyProcedure, Lazy, Procedure, ProcedureClient } from "@orpc/server";
import type { AdminRouter } from "../plugins/admin/index.js";
import type { AppRpcContext, AppDatabase, AppMigrator, AppOverview, KernelDescription, ProcedureTree, RequestFacts, SealedApp } from "../kernel/index.js";
import type { QueryApi } from "../kernel/db/query.js";

/** `"user.me"` with procedure P becomes `{ user: { me: P } }`. */
export type NestName<N extends string, P> = N extends `${infer Head}.${infer Rest}`
  ? { [K in Head]: NestName<Rest, P> }
  : { [K in N]: P };

/** The context procedures see: the app context typed by the latest schema, plus middleware deltas. */
export type ContextOf<DB, Extra, Q = QueryApi<DB>> = Omit<AppRpcContext<DB>, "db"> & { db: AppDatabase<DB, Q> } & Extra;

/**
 * The typed client of a router, in process and over HTTP alike: oRPC's client per procedure, except
 * where a procedure carries a `~client` call signature (resources), which is used instead so that
 * outputs follow the arguments (`include`).
 */
export type ClientOf<R> = R extends { readonly "~client": infer C }
  ? C
  : R extends Procedure<any, any, infer I, infer O, infer E, any>
    ? ProcedureClient<Record<never, never>, I, O, E>
    : R extends Lazy<infer U>
      ? ClientOf<U>
      : { [K in keyof R as K extends "~channels" ? never : K]: ClientOf<R[K]> };

/** `QueryApi<DB>`, or `any` over `any`, so that `BuiltApp<any>` accepts every app whatever its schema. */
type DefaultQuery<DB> = 0 extends 1 & DB ? any : QueryApi<DB>;

export interface BuiltApp<Router = ProcedureTree, DB = any, Q = DefaultQuery<DB>> {
  /** The Fetch handler; `facts.clientAddress` is the caller's address when the transport knows it. */
  handle(request: Request, facts?: RequestFacts): Promise<Response>;
  /** In-process client that skips HTTP; permissions see the session of the given headers. */
  client(headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>)): ClientOf<Router>;
  /** Kysely's migrator over the schema versions, run after the app's setup. */
  readonly migrator: AppMigrator;
  readonly router: Router;
  readonly db: AppDatabase<DB, Q>;
  /** The finished app as plugins see it: the gate (`call`), applied migrations, services. */
  readonly sealed: SealedApp;
  /** Releases the database (the embedded one included) and plugin resources. Idempotent. */
  close(): Promise<void>;
  /** Plugins in resolved order, hook taps, routes and procedures. */
  describe(): KernelDescription;
  /** What the app is, as the start banner shows it: database, schema version, plugins, surfaces. */
  overview(): AppOverview;
}

/** The router type of an `App` or a `BuiltApp`, for `createClient<InferRouter<typeof app>>()`. */
export type InferRouter<T> = T extends { readonly "~router": infer R }
  ? R
  : T extends BuiltApp<infer R, any>
    ? R
    : never;

export type AnyProcedureOf = AnyProcedure;

/** What `.admin()` adds to the router: `client._admin.meta()`, `client._admin.data.list(...)`, ... */
export type AppAdminRouter = { _admin: AdminRouter };
