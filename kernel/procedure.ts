import { os, ORPCError, type BuilderWithMiddlewares, type Middleware, type Schema } from "@orpc/server";
import type { AppRpcContext } from "./context.js";
import type { SessionUser } from "./request/session.js";
import { PERMISSION, describePermission } from "./introspection/access.js";

/** Metadata procedures may carry (surfaces such as MCP read their own keys from it). */
export type ProcedureMeta = Record<string, unknown>;

/** The builder a `.procedure()` callback receives: `.input()`, `.output()`, `.meta()`, `.handler()`. */
export type ProcedureBase<Ctx> = BuilderWithMiddlewares<
  AppRpcContext,
  Ctx & Record<never, never>,
  Schema<unknown, unknown>,
  Schema<unknown, unknown>,
  Record<never, never>,
  ProcedureMeta
>;

export type PermissionFn<Ctx> = (args: { context: Ctx }) => boolean | Promise<boolean>;
export type ProcedurePermission<Ctx = AppRpcContext> = "public" | "authenticated" | "admin" | PermissionFn<Ctx>;

export interface ProcedureOptions<Ctx = AppRpcContext> {
  /**
   * Who may call the procedure. `authenticated` answers 401 when signed out; `admin` and functions 403.
   * @default "public"
   */
  permission?: ProcedurePermission<Ctx>;
  /**
   * Roles accepted by `admin`.
   * @default ["admin"]
   */
  roles?: readonly string[];
}

/** The root builder: oRPC's `os` typed with the app context. */
export function rootBuilder(): ProcedureBase<AppRpcContext> {
  // A plain Builder has every method of BuilderWithMiddlewares; the narrower type hides `$context`.
  return os.$context<AppRpcContext>().$meta<ProcedureMeta>({}) as unknown as ProcedureBase<AppRpcContext>;
}

/** True when one of the user's comma-separated roles is accepted. */
export function hasRole(user: Pick<SessionUser, "role"> | null | undefined, roles: readonly string[]): boolean {
  if (!user?.role) return false;
  for (const role of String(user.role).split(",")) if (roles.includes(role.trim())) return true;
  return false;
}

/**
 * The part of a permission that needs nothing but the session: 401 signed out for `authenticated`
 * and `admin`, 403 when `admin` finds no accepted role. `public` and functions pass here.
 */
export function assertRole(permission: unknown, roles: readonly string[], context: { user: SessionUser | null }): void {
  if (permission !== "authenticated" && permission !== "admin") return;
  if (!context.user) throw new ORPCError("UNAUTHORIZED", { message: "Sign in to call this procedure" });
  if (permission === "admin" && !hasRole(context.user, roles)) {
    throw new ORPCError("FORBIDDEN", { message: `Requires one of the roles: ${roles.join(", ")}` });
  }
}

/** Throws the status the permission calls for: 401 signed out, 403 role missing or function false. */
export async function assertPermission<Ctx extends { user: SessionUser | null }>(
  permission: ProcedurePermission<Ctx>,
  roles: readonly string[],
  context: Ctx,
): Promise<void> {
  if (typeof permission === "function") {
    if (!(await permission({ context }))) throw new ORPCError("FORBIDDEN", { message: "Permission denied" });
    return;
  }
  assertRole(permission, roles, context);
}

/** The permission check as an oRPC middleware, placed before input validation (401/403 before 400). */
export function permissionMiddleware<Ctx extends AppRpcContext>(
  options: ProcedureOptions<Ctx>,
): Middleware<Ctx, Record<never, never>, unknown, unknown, any, ProcedureMeta> {
  const permission = options.permission ?? "public";
  const roles = options.roles ?? ["admin"];
  const middleware: Middleware<Ctx, Record<never, never>, unknown, unknown, any, ProcedureMeta> = async ({ context, next }) => {
    await assertPermission(permission, roles, context);
    return next();
  };
  // Tagged, so introspection (the route table, the OpenAPI document) reads the rule it enforces.
  return Object.assign(middleware, { [PERMISSION]: describePermission(permission, roles) });
}
