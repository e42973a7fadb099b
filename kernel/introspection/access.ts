// Who may call a procedure, in words: the one reading `trellis routes`, the OpenAPI document and
// the MCP listing share.
/** The key `permissionMiddleware` tags its middleware with: the rule it enforces, in words. */
export const PERMISSION = Symbol.for("trellis.permission");

/** A rule as gates take it: the procedures' vocabulary, plus `owner` and `where` rules (resources and files). */
export type AccessRule = "public" | "authenticated" | "admin" | "owner" | ((...args: any[]) => unknown) | Readonly<Record<string, unknown>>;

/**
 * The meta a gate puts on the procedures it guards, `{ access }`, so every surface reports the rule
 * the gate enforces: `trellis routes`, the OpenAPI `security` and MCP listings all read it through
 * `declaredPermission`. Resources and files tag their procedures with it; `permissionMiddleware`
 * carries the same words on the middleware itself.
 */
export function accessMeta(rule: AccessRule, roles: readonly string[] = ["admin"]): { access: string } {
  return { access: describePermission(rule, roles) };
}

/** A permission in words: `public`, `authenticated`, `owner`, `where` (a where rule: signed in), `admin (admin, editor)` or `function`. */
export function describePermission(permission: AccessRule, roles: readonly string[]): string {
  // A function may say what it checks (the organization rules do): `member`, `org:admin`, ...
  if (typeof permission === "function") {
    const access = (permission as unknown as { access?: unknown }).access;
    return typeof access === "string" ? access : "function";
  }
  if (typeof permission === "object") return "where";
  return permission === "admin" ? `admin (${roles.join(", ")})` : permission;
}

/**
 * Who may call a procedure, in the words above: the one source every surface reads. The `access`
 * meta a gate declared (resources, files), else the rule of its `permissionMiddleware`, else
 * `public` (a procedure with neither has no gate). Anything but `public` may refuse a signed-out
 * caller: 401, or 403 when a function rule says no.
 */
export function declaredPermission(procedure: { "~orpc": { meta?: unknown; middlewares: readonly unknown[] } }): string {
  const declared = (procedure["~orpc"].meta as { access?: unknown } | undefined)?.access;
  if (typeof declared === "string") return declared;
  for (const middleware of procedure["~orpc"].middlewares) {
    const tag = (middleware as { [PERMISSION]?: string })[PERMISSION];
    if (tag) return tag;
  }
  return "public";
}
