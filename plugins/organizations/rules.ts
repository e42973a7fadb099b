import { RpcError } from "../../kernel/index.js";
import type { Membership, PermissionStatements, Tenancy } from "./options.js";

/**
 * Permission rules by membership of the caller's active organization, usable wherever a resource or
 * procedure takes a permission:
 *
 * - `"member"`: any member of the active organization;
 * - `"org:admin"`: a member holding `admin` or `owner` (an owner can do what an admin can);
 * - `"org:owner"`: a member holding `owner`;
 * - `{ orgRole: ["admin", "billing"] }`: a member holding one of these roles;
 * - `{ permission: { task: ["delete"] } }`: a member one of whose roles grants every action named,
 *   under the app's access-control statements (`.auth({ organization: { ac, roles } })`).
 *
 * Each becomes a permission function reading `context.organizations`. On a procedure: 401 signed
 * out, 403 `NO_ACTIVE_ORGANIZATION` without an active organization, 403 naming the rule when the
 * role does not fit. On a resource it answers as a function does (403 after the input is checked;
 * a tenant resource's gate has answered 401 or `NO_ACTIVE_ORGANIZATION` first), and an include of
 * a resource the caller may not list hides its rows rather than failing the read.
 */
export type OrgRule =
  | "member"
  | "org:admin"
  | "org:owner"
  | { readonly orgRole: readonly string[] }
  | { readonly permission: PermissionStatements };

const NAMED: Record<string, readonly string[] | undefined> = { member: undefined, "org:admin": ["admin", "owner"], "org:owner": ["owner"] };

type Caller = { context: { session: Record<string, unknown> | null; user: { id: string } | null; organizations?: Tenancy } };
/** `access`: what introspection (the route table, OpenAPI) reports of the rule. */
type RuleFn = ((args: Caller) => Promise<boolean>) & { readonly access: string };

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * Whether a permission is an organization rule. An object counts only with a single `orgRole` key
 * (an array) or a single `permission` key (an object of action lists), so a `where` rule on a
 * column that happens to be named `permission` (`{ permission: "edit" }`) stays a `where` rule.
 */
export function isOrgRule(permission: unknown): permission is OrgRule {
  if (typeof permission === "string") return Object.hasOwn(NAMED, permission);
  if (!isPlain(permission)) return false;
  const keys = Object.keys(permission);
  if (keys.length !== 1) return false;
  if (keys[0] === "orgRole") return Array.isArray(permission.orgRole);
  const statements = permission.permission;
  return keys[0] === "permission" && isPlain(statements) && Object.values(statements).every((actions) => Array.isArray(actions));
}

function describe(rule: OrgRule): string {
  if (typeof rule === "string") return rule;
  if ("orgRole" in rule) return `organization role ${rule.orgRole.join(" or ")}`;
  return `organization permission ${Object.entries(rule.permission).map(([statement, actions]) => `${statement}: ${actions.join(", ")}`).join("; ")}`;
}

function allows(rule: OrgRule, membership: Membership, tenancy: Tenancy): boolean {
  if (typeof rule === "string") {
    const roles = NAMED[rule];
    return !roles || membership.roles.some((role) => roles.includes(role));
  }
  if ("orgRole" in rule) return membership.roles.some((role) => rule.orgRole.includes(role));
  return tenancy.can(membership, rule.permission);
}

/**
 * The rule as a permission function. `explain`: a refusal throws a 403 naming what is missing (for
 * procedures); otherwise it answers `false` (a resource's 403, and rows hidden from an include).
 */
export function orgRulePermission(rule: OrgRule, explain: boolean): RuleFn {
  const check = async ({ context }: Caller): Promise<boolean> => {
    const tenancy = context.organizations;
    if (!tenancy) throw new RpcError("FORBIDDEN", { message: `This app has no organizations: ${describe(rule)} cannot hold` });
    // A resource's rule also scopes includes, where a refusal must hide rows, not fail the read; on a
    // tenant resource the tenant gate has already answered 401 or 403 with its reason.
    const membership = explain ? await tenancy.require(context) : await tenancy.membership(context);
    if (!membership) return false;
    if (allows(rule, membership, tenancy)) return true;
    if (explain) throw new RpcError("FORBIDDEN", { message: `Requires ${describe(rule)} in the active organization` });
    return false;
  };
  return Object.assign(check, { access: describe(rule) });
}

/** A permission with any organization rule turned into its function; every other permission as given. */
export function withOrgRule<P>(permission: P, explain: boolean): P {
  return (isOrgRule(permission) ? orgRulePermission(permission, explain) : permission) as P;
}
