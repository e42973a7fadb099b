import type { AnyProcedure, AnyRouter, RouterClient } from "@orpc/server";
import type { AdminRouter } from "../plugins/admin/index.js";
import type { AppRpcContext, AppDatabase, AppMigrator, KernelDescription, ProcedureTree, RequestFacts, SealedApp } from "../kernel/index.js";

/** `"user.me"` with procedure P becomes `{ user: { me: P } }`. */
export type NestName<N extends string, P> = N extends `${infer Head}.${infer Rest}`
  ? { [K in Head]: NestName<Rest, P> }
  : { [K in N]: P };

/** The context procedures see: the app context typed by the latest schema, plus middleware deltas. */
export type ContextOf<DB, Extra> = Omit<AppRpcContext<DB>, "db"> & { db: AppDatabase<DB> } & Extra;

export interface BuiltApp<Router = ProcedureTree, DB = any> {
  /** The Fetch handler; `facts.clientAddress` is the caller's address when the transport knows it. */
  handle(request: Request, facts?: RequestFacts): Promise<Response>;
  /** In-process client that skips HTTP; permissions see the session of the given headers. */
  client(headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>)): RouterClient<Router extends AnyRouter ? Router : never>;
  /** Kysely's migrator over the schema versions, run after the app's setup. */
  readonly migrator: AppMigrator;
  readonly router: Router;
  readonly db: AppDatabase<DB>;
  /** The finished app as plugins see it: the gate (`call`), applied migrations, services. */
  readonly sealed: SealedApp;
  /** Releases the database (the embedded one included) and plugin resources. Idempotent. */
  close(): Promise<void>;
  /** Plugins in resolved order, hook taps, routes and procedures. */
  describe(): KernelDescription;
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
