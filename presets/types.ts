import type { AnyProcedure, AnyRouter, RouterClient } from "@orpc/server";
import type { Migrator } from "kysely";
import type { AppRpcContext, AppDatabase, KernelDescription, ProcedureTree } from "../kernel/index.js";

/** `"user.me"` with procedure P becomes `{ user: { me: P } }`. */
export type NestName<N extends string, P> = N extends `${infer Head}.${infer Rest}`
  ? { [K in Head]: NestName<Rest, P> }
  : { [K in N]: P };

/** The context procedures see: the app context typed by the latest schema, plus middleware deltas. */
export type ContextOf<DB, Extra> = Omit<AppRpcContext<DB>, "db"> & { db: AppDatabase<DB> } & Extra;

export interface BuiltApp<Router = ProcedureTree, DB = any> {
  /** The Fetch handler. */
  handle(request: Request): Promise<Response>;
  /** In-process client that skips HTTP; permissions see the session of the given headers. */
  client(headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>)): RouterClient<Router extends AnyRouter ? Router : never>;
  readonly migrator: Migrator;
  readonly router: Router;
  readonly db: AppDatabase<DB>;
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
