import { TrellisError, hasRole, type AppRpcContext, type SchemaModel } from "../../kernel/index.js";
import type { IncludableRelation, ResourceOptions, ResourcePermission } from "./options.js";
import { RESOURCE_INCLUDE_BYPASS, RESOURCE_INCLUDE_UNSCOPABLE } from "./errors.js";
import { isWhereRule, withUser } from "./user-where.js";
import { both, relatedTenantWhere, type Tenant } from "./tenant.js";

/**
 * What `include` returns of a relation. SPEC.md makes `includable` the author's choice: a bare name
 * includes every related row, whatever the related resource allows. `{ relation, scoped: true }`
 * applies the related resource's `list` rule instead, as a `where` on the included rows that the
 * query compiles into the same statement as the rest of the read (no query per row).
 */

/** The rules of the resource an included relation points at, when the include is scoped. */
export interface RelatedRules {
  name: string;
  list: ResourcePermission<any, any>;
  ownerColumn: string | undefined;
  /** The related resource's tenant: its rows are always kept to the caller's organization. */
  tenant?: Tenant;
}

export interface IncludeRule {
  /** Set for scoped includes once the related resource is known (at build). */
  scoped?: RelatedRules;
  /** The author wrote `{ relation, scoped }` rather than a bare name: no warning for an unscoped one. */
  explicit: boolean;
  /** The table the relation points at. */
  target: string;
  /**
   * The target resource's tenant, scoped or not: an include never reaches another organization's
   * rows (`scoped: false` chooses to skip the related resource's rules, not the tenant boundary).
   */
  tenant?: Tenant;
}

type Where = Record<string, unknown>;

/** Matches no row: the caller may not list the related resource. */
const NOTHING: Where = Object.freeze({ OR: [] }) as Where;
/** Resource `admin` means the role `admin` itself (see permissions.ts). */
const ADMIN_ROLES = ["admin"];

export function normalizeIncludable(includable: ResourceOptions["includable"]): IncludableRelation[] {
  return (includable ?? []).map((entry) => (typeof entry === "string" ? { relation: entry } : entry));
}

/**
 * The include rules of resource `name`, keyed by relation. `resources` maps every declared resource
 * to its rules; a scoped include whose table has no resource cannot be scoped and fails the build.
 */
export function includeRules(
  name: string,
  includable: readonly IncludableRelation[],
  schema: SchemaModel,
  resources: ReadonlyMap<string, RelatedRules>,
): Map<string, IncludeRule> {
  const rules = new Map<string, IncludeRule>();
  const relations = schema.relations[name] ?? {};
  for (const entry of includable) {
    const target = relations[entry.relation]!.target;
    const rule: IncludeRule = { explicit: entry.scoped !== undefined, target, ...(resources.get(target)?.tenant && { tenant: resources.get(target)!.tenant }) };
    if (entry.scoped) {
      const related = resources.get(target);
      if (!related) {
        throw new TrellisError(
          RESOURCE_INCLUDE_UNSCOPABLE,
          `Resource "${name}" includes "${entry.relation}" scoped, but table "${target}" has no resource whose rules could apply; declare .resource("${target}", ...) or include it unscoped`,
          { plugin: "resources", hook: "validate" },
        );
      }
      rule.scoped = related;
    }
    rules.set(entry.relation, rule);
  }
  return rules;
}

/**
 * A line per bare includable relation whose rows some rule would otherwise hide: a related resource
 * whose `list` is not public (owner scoping included), or a table no resource exposes at all.
 */
export function bypassWarnings(name: string, rules: ReadonlyMap<string, IncludeRule>, resources: ReadonlyMap<string, RelatedRules>): string[] {
  const out: string[] = [];
  for (const [relation, rule] of rules) {
    if (rule.scoped || rule.explicit) continue;
    const related = resources.get(rule.target);
    const bypassed = !related
      ? `table "${rule.target}" has no resource, so its rows are listed nowhere else`
      : related.list === "owner"
        ? `resource "${related.name}" lists only the caller's rows (list "owner", ownerColumn "${related.ownerColumn}")`
        : related.list === "public"
          ? undefined
          : `resource "${related.name}" has list ${typeof related.list === "function" ? "a permission function" : typeof related.list === "object" ? "a where rule" : `"${related.list}"`}`;
    if (!bypassed) continue;
    out.push(
      `${RESOURCE_INCLUDE_BYPASS}: resource "${name}" includes "${relation}" with every related row, bypassing a rule: ${bypassed}. ` +
        `Write { relation: "${relation}", scoped: true } to apply it, or { relation: "${relation}", scoped: false } to keep every row on purpose`,
    );
  }
  return out;
}

/**
 * The `where` the included rows must meet for this caller under the related resource's `list` rule:
 * undefined (every row), the owner condition, or a condition matching nothing. Never a 401 or 403:
 * a rule that refuses the caller hides the rows, it does not fail the parent's read.
 */
export async function listScope(rules: RelatedRules, context: AppRpcContext): Promise<Where | undefined> {
  const rule = await ruleScope(rules, context);
  return rules.tenant && rule !== NOTHING ? both(rule, await relatedTenantWhere(rules.tenant, context)) : rule;
}

async function ruleScope(rules: RelatedRules, context: AppRpcContext): Promise<Where | undefined> {
  const { list } = rules;
  if (list === "public") return undefined;
  if (typeof list === "function") {
    const verdict = await list({ context });
    return !verdict ? NOTHING : typeof verdict === "object" ? verdict : undefined;
  }
  if (!context.user) return NOTHING;
  if (list === "owner") return { [rules.ownerColumn!]: context.user.id };
  if (isWhereRule(list)) return withUser(list, context.user.id) as Where;
  if (list === "admin") return hasRole(context.user, ADMIN_ROLES) ? undefined : NOTHING;
  return undefined;
}

/** The query's `include` for what the caller asked: scoped relations carry their `where`. */
export async function includeArgs(
  asked: Record<string, true> | undefined,
  rules: ReadonlyMap<string, IncludeRule>,
  context: AppRpcContext,
): Promise<Record<string, true | { where?: Where }> | undefined> {
  if (!asked) return undefined;
  const out: Record<string, true | { where?: Where }> = {};
  for (const relation of Object.keys(asked)) {
    const rule = rules.get(relation);
    const scoped = rule?.scoped;
    const where = scoped ? await listScope(scoped, context) : rule?.tenant ? await relatedTenantWhere(rule.tenant, context) : undefined;
    out[relation] = where ? { where } : true;
  }
  return out;
}
