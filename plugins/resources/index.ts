import { TrellisError, primaryKeyOf, type AppPlugin, type PluginContext, type ProcedureBase, type ResourceInfo, type SchemaModel, type SealedApp } from "../../kernel/index.js";
import { authorizer } from "./authorize.js";
import { bindHooks } from "./hooks.js";
import { adminHooks } from "./admin-hooks.js";
import { ACTIONS, checkOptions, listLimits, liveLimits, type ResourceOptions } from "./options.js";
import { resourceProcedures, type ResourceSpec } from "./procedures.js";
import { bypassWarnings, includeRules, normalizeIncludable, type RelatedRules } from "./include-rules.js";
import {
  RESOURCE_DUPLICATE,
  RESOURCE_LIVE_NO_PROVIDER,
  RESOURCE_NO_PRIMARY_KEY,
  RESOURCE_TABLE_MISSING,
  RESOURCE_UNKNOWN_COLUMN,
  RESOURCE_UNKNOWN_RELATION,
  RESOURCE_RULE_INVALID,
  RESOURCE_TENANT_NO_ORGANIZATIONS,
} from "./errors.js";
import { isWhereRule, withUser } from "./user-where.js";
import { schedulePurge, softDeleteOf, type SoftDelete } from "./soft-delete.js";
import type { TenantSource } from "./tenant.js";
import { historySource, type HistorySource } from "./history.js";

export type {
  IncludableRelation,
  ResourceOptions,
  ResourcePermission,
  ResourcePermissions,
  ResourcePermissionFn,
  ListFilter,
  ResourceAction,
} from "./options.js";
export type { ResourceMeta } from "./procedures.js";
export type { ResourceHooks, HookCaller, BeforeHook } from "./hooks.js";
export type { SoftDeleteOptions, SoftDeleteService } from "./soft-delete.js";

interface Declared {
  name: string;
  options: ResourceOptions<any, any>;
  /** The procedure builder at the `.resource()` call: middleware registered before it applies. */
  base: ProcedureBase<any>;
}

export interface ResourcesPlugin extends AppPlugin {
  /**
   * Declares a resource. Rules that need no schema are checked here; column and relation names at
   * build, against the latest schema (a later `.schema()` may add the column an option names).
   */
  add(name: string, options: ResourceOptions<any, any>, base?: ProcedureBase<any>): void;
}

/**
 * Generated CRUD: `{name}.list/get/create/update/delete` for tables of the latest schema. Stage
 * `feature`: after auth (its permissions read the session), before user plugins (which see these
 * procedures).
 */
export function resourcesPlugin(): ResourcesPlugin {
  const declared: Declared[] = [];
  let tenantSource: (() => TenantSource) | undefined;
  let specs: ResourceSpec[] = [];
  /** Every resource's list rule, by table: what a scoped include applies. */
  let related = new Map<string, RelatedRules>();
  return {
    name: "resources",
    stage: "feature",
    // A batch charges the rate limit one count per item, through its service; soft deletes are purged by a cron job.
    // Tenant-scoped resources read the caller's organization through the organizations service, and
    // a resource's history the audit log's entries through the audit-history service.
    optionalDependencies: ["rate-limit", "jobs", "organizations", "audit"],
    // A plain object rather than definePlugin's result: it carries `add` for the facade.
    add(name, options, base) {
      checkOptions(name, options);
      if (declared.some((resource) => resource.name === name)) {
        throw new TrellisError(RESOURCE_DUPLICATE, `Resource "${name}" is already declared`, { plugin: "resources", hook: "add" });
      }
      declared.push({ name, options, base: base as ProcedureBase<any> });
    },
    validate(ctx) {
      const problems: TrellisError[] = [];
      specs = [];
      const includable = new Map<string, ResourceOptions["includable"]>();
      const source = () => tenantSource!();
      for (const resource of declared) {
        try {
          specs.push(resolve(resource, ctx.schema, ctx.base, source));
          if (resource.options.live && !liveProvided(ctx)) {
            throw fail(
              RESOURCE_LIVE_NO_PROVIDER,
              `Resource "${resource.name}" streams (live), but the database has no live provider: embedded() has one; for SQLite pass db.live = localLive(), for PostgreSQL db.live = postgresLive(...) (both from trellis/db)`,
            );
          }
          if (resource.options.tenant !== undefined && !ctx.schema.auth?.organizations) {
            throw fail(
              RESOURCE_TENANT_NO_ORGANIZATIONS,
              `Resource "${resource.name}" is tenant-scoped (tenant "${resource.options.tenant}"), but the app has no organizations: declare them with schema("1").auth({ organizations: true }) and call .auth()`,
            );
          }
          if (resource.options.tenant !== undefined) ctx.requireSession(`resource "${resource.name}" (tenant "${resource.options.tenant}")`);
          includable.set(resource.name, resource.options.includable);
        } catch (error) {
          problems.push(error as TrellisError);
          continue;
        }
        for (const action of ACTIONS) {
          const permission = resource.options.permissions?.[action] ?? "public";
          if (permission !== "public") {
            const label = typeof permission === "function" ? "a permission function" : `"${permission}"`;
            ctx.requireSession(`resource "${resource.name}" ${action} (permission ${label})`);
          }
        }
      }
      // Scoped includes read the related resource's rules: every resource must be resolved first.
      related = new Map(specs.map((spec) => [spec.name, { name: spec.name, list: spec.permissions.list, ownerColumn: spec.ownerColumn, tenant: spec.tenant }]));
      // Relation filters read the same rules: every resource's list rule, and what each makes includable.
      const relationRules = {
        schema: ctx.schema,
        resources: related,
        includable: new Map(specs.map((spec) => [spec.name, new Set(normalizeIncludable(includable.get(spec.name)).map((entry) => entry.relation))])),
      };
      for (const spec of specs) {
        spec.relationRules = relationRules;
        try {
          spec.includable = includeRules(spec.name, normalizeIncludable(includable.get(spec.name)), ctx.schema, related);
        } catch (error) {
          problems.push(error as TrellisError);
        }
      }
      if (problems.length === 1) throw problems[0];
      if (problems.length) {
        throw new TrellisError("RESOURCE_INVALID", problems.map((problem) => problem.message).join("; "), { plugin: "resources", hook: "validate", cause: problems });
      }
    },
    build(ctx) {
      const { db, kind } = ctx.resources;
      // The organizations plugin (stage identity) provided it in its own build, before this one.
      const organizations = ctx.want("organizations") as unknown as TenantSource | undefined;
      if (!organizations && specs.some((spec) => spec.tenant)) {
        throw new TrellisError(RESOURCE_TENANT_NO_ORGANIZATIONS, "Tenant-scoped resources need the organizations plugin (registered by .auth())", { plugin: "resources", hook: "build" });
      }
      tenantSource = () => organizations!;
      // The audit plugin (same stage, ordered before this one by the dependency) provided it in its build.
      const history = historySource(ctx.want("audit-history") as unknown as HistorySource | undefined, specs.filter((spec) => spec.keepsHistory).map((spec) => spec.name));
      const rateLimit = ctx.want("rate-limit");
      // The author's choice stays theirs (SPEC.md), but made visible: a bare includable relation that
      // returns rows a related rule would hide is reported once, at build, with its code.
      for (const spec of specs) for (const line of bypassWarnings(spec.name, spec.includable, related)) console.warn(`[trellis] resources: ${line}`);
      const procedures: Record<string, unknown> = {};
      const registry = new Map<string, ResourceInfo>();
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      for (const spec of specs) {
        const declaredHooks = declared.find((resource) => resource.name === spec.name)?.options.hooks;
        spec.hooks = bindHooks(spec.name, declaredHooks, (error, source, event) => ctx.report(error, source, event));
        checkWhereRules(spec, db);
        if (spec.keepsHistory) spec.history = history;
        procedures[spec.name] = resourceProcedures(spec, db, kind, () => sealed!, rateLimit);
        registry.set(spec.name, describe(spec, authorizer(spec, db)));
      }
      schedulePurge(ctx, new Map(specs.filter((spec) => spec.softDelete).map((spec) => [spec.name, spec.softDelete!] as [string, SoftDelete])), db, kind);
      // Published for files (attach permissions), admin, REST and live, which must not reach in here.
      ctx.provide("resource-registry", registry);
      return { procedures: procedures as never };
    },
  } satisfies ResourcesPlugin;
}

function resolve(resource: Declared, schema: SchemaModel, fallbackBase: ProcedureBase<any>, tenantSource: () => TenantSource): ResourceSpec {
  const { name, options } = resource;
  const table = schema.tables[name];
  if (!table) {
    throw fail(RESOURCE_TABLE_MISSING, `Resource "${name}" has no table "${name}" in the latest schema (version "${schema.version}"); declare it with .table("${name}", ...) in an earlier .schema()`);
  }
  const primaryKey = primaryKeyOf(table);
  if (!primaryKey) throw fail(RESOURCE_NO_PRIMARY_KEY, `Table "${name}" needs a .primaryKey() column to be a resource`);
  checkNames(name, options, schema);
  const columns = Object.keys(table.columns);
  const serverControlled = new Set([...(options.readonly ?? []), ...(options.ownerColumn ? [options.ownerColumn] : []), ...(options.tenant ? [options.tenant] : [])]);
  const settable = (options.writable ?? columns).filter(
    (column) => !serverControlled.has(column) && table.columns[column].type !== "serial",
  );
  const permissions = Object.fromEntries(ACTIONS.map((action) => [action, options.permissions?.[action] ?? "public"])) as ResourceSpec["permissions"];
  return {
    name,
    table,
    primaryKey,
    ownerColumn: options.ownerColumn,
    permissions,
    limits: listLimits(options),
    batchLimit: options.batchLimit ?? 100,
    includable: new Map(),
    relationRules: { schema, resources: new Map(), includable: new Map() },
    settable,
    live: liveLimits(options),
    mcp: options.mcp === true ? [...ACTIONS, "page", "batch"] : options.mcp || [],
    base: resource.base ?? fallbackBase,
    hooks: undefined,
    softDelete: softDeleteOf(name, table, options.softDelete),
    keepsHistory: options.history === true,
    ...(options.tenant !== undefined && { tenant: { column: options.tenant, source: tenantSource } }),
  };
}

function describe(spec: ResourceSpec, authorize: ResourceInfo["authorize"]): ResourceInfo {
  const permissions = Object.fromEntries(
    ACTIONS.map((action) => [action, typeof spec.permissions[action] === "function" ? "function" : typeof spec.permissions[action] === "object" ? "where" : spec.permissions[action]]),
  ) as ResourceInfo["permissions"];
  const procedures: Record<string, string> = Object.fromEntries(ACTIONS.map((action) => [action, `${spec.name}.${action}`]));
  if (spec.live) procedures.live = `${spec.name}.live`;
  if (spec.softDelete) procedures.restore = `${spec.name}.restore`;
  if (spec.keepsHistory) procedures.history = `${spec.name}.history`;
  return Object.freeze({
    name: spec.name,
    table: spec.table,
    primaryKey: spec.primaryKey,
    ownerColumn: spec.ownerColumn,
    ...(spec.tenant && { tenant: spec.tenant.column }),
    permissions: Object.freeze(permissions),
    includable: Object.freeze([...spec.includable.keys()]),
    procedures: Object.freeze(procedures),
    authorize,
    ...(spec.hooks && { hooks: adminHooks(spec.hooks) }),
  });
}

/** The database config's live provider (`embedded()` sets one; `localLive()`/`postgresLive()` from trellis/db). */
function liveProvided(ctx: PluginContext): boolean {
  return ctx.resources.live !== undefined;
}

/** A `where` rule is compiled once at build (the caller's id a placeholder), so a bad one fails the build, not a request. */
function checkWhereRules(spec: ResourceSpec, db: PluginContext["resources"]["db"]): void {
  for (const action of ACTIONS) {
    const rule = spec.permissions[action];
    if (!isWhereRule(rule)) continue;
    try {
      (db.query as Record<string, { predicate(where: unknown): unknown }>)[spec.name]!.predicate(withUser(rule, "user"));
    } catch (error) {
      throw new TrellisError(RESOURCE_RULE_INVALID, `Resource "${spec.name}": the ${action} rule does not fit table "${spec.name}": ${(error as Error).message.replace(/^where/, "rule")}`, { plugin: "resources", hook: "build", cause: error });
    }
  }
}

function fail(code: string, message: string): TrellisError {
  return new TrellisError(code, message, { plugin: "resources", hook: "validate" });
}

/** Column and relation names the options refer to must exist on the table. */
function checkNames(name: string, options: ResourceOptions<any, any>, schema: SchemaModel): void {
  const table = schema.tables[name];
  const columns = Object.keys(table.columns);
  const unknown = (list: readonly string[] | undefined, label: string) => {
    const bad = (list ?? []).filter((column) => !columns.includes(column));
    if (bad.length) throw fail(RESOURCE_UNKNOWN_COLUMN, `Resource "${name}" ${label} names unknown columns: ${bad.join(", ")}`);
  };
  unknown(options.writable, "writable");
  unknown(options.readonly, "readonly");
  if (options.ownerColumn) unknown([options.ownerColumn], "ownerColumn");
  if (options.tenant !== undefined) unknown([options.tenant], "tenant");
  const relations = schema.relations[name] ?? {};
  const badRelations = normalizeIncludable(options.includable)
    .map((entry) => entry.relation)
    .filter((relation) => typeof relation !== "string" || !Object.hasOwn(relations, relation));
  if (badRelations.length) {
    throw fail(RESOURCE_UNKNOWN_RELATION, `Resource "${name}" includable names unknown relations: ${badRelations.join(", ")}`);
  }
}
