import type { ResourcePermission } from "./options.js";

/** `where` rules: the `"$user.id"` placeholder (where-rules.ts says how rules apply). */

type Where = Record<string, unknown>;

/** The placeholder a `where` rule uses for the caller's id. */
export const USER_ID = "$user.id";

/** Every `"$user.id"` in `rule` replaced with `id`, at any depth (arrays and operator objects too). */
export function withUser(rule: unknown, id: string): unknown {
  if (rule === USER_ID) return id;
  if (Array.isArray(rule)) return rule.map((item) => withUser(item, id));
  if (typeof rule !== "object" || rule === null || Object.getPrototypeOf(rule) !== Object.prototype) return rule;
  const out: Where = {};
  for (const [key, value] of Object.entries(rule)) out[key] = withUser(value, id);
  return out;
}

/** A permission written as a `where` object (not a role name, not a function). */
export function isWhereRule(permission: ResourcePermission<any, any>): permission is Where {
  return typeof permission === "object" && permission !== null;
}

