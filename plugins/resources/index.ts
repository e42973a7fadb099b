import { TrellisError, primaryKeyOf, type AppPlugin, type ProcedureBase, type SchemaModel } from "../../kernel/index.js";
import { ACTIONS, checkOptions, listLimits, type ResourceOptions } from "./options.js";
import { resourceProcedures, type ResourceSpec } from "./procedures.js";
import {
  RESOURCE_DUPLICATE,
  RESOURCE_NO_PRIMARY_KEY,
  RESOURCE_TABLE_MISSING,
  RESOURCE_UNKNOWN_COLUMN,
  RESOURCE_UNKNOWN_RELATION,
} from "./errors.js";

export type { ResourceOptions, ResourcePermission, ResourcePermissions, ResourcePermissionFn, ResourceAction } from "./options.js";

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
  let specs: ResourceSpec[] = [];
  return {
    name: "resources",
    stage: "feature",
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
      for (const resource of declared) {
        try {
          specs.push(resolve(resource, ctx.schema, ctx.base));
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
      if (problems.length === 1) throw problems[0];
      if (problems.length) {
        throw new TrellisError("RESOURCE_INVALID", problems.map((problem) => problem.message).join("; "), { plugin: "resources", hook: "validate", cause: problems });
      }
    },
    build(ctx) {
      const procedures: Record<string, unknown> = {};
      for (const spec of specs) procedures[spec.name] = resourceProcedures(spec, ctx.resources.db, ctx.resources.kind);
      return { procedures: procedures as never };
    },
  } satisfies ResourcesPlugin;
}

function resolve(resource: Declared, schema: SchemaModel, fallbackBase: ProcedureBase<any>): ResourceSpec {
  const { name, options } = resource;
  const table = schema.tables[name];
  if (!table) {
    throw fail(RESOURCE_TABLE_MISSING, `Resource "${name}" has no table "${name}" in the latest schema (version "${schema.version}"); declare it with .table("${name}", ...) in an earlier .schema()`);
  }
  const primaryKey = primaryKeyOf(table);
  if (!primaryKey) throw fail(RESOURCE_NO_PRIMARY_KEY, `Table "${name}" needs a .primaryKey() column to be a resource`);
  checkNames(name, options, schema);
  const columns = Object.keys(table.columns);
  const serverControlled = new Set([...(options.readonly ?? []), ...(options.ownerColumn ? [options.ownerColumn] : [])]);
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
    includable: new Set(options.includable ?? []),
    settable,
    base: resource.base ?? fallbackBase,
  };
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
  const relations = schema.relations[name] ?? {};
  const badRelations = (options.includable ?? []).filter((relation) => !(relation in relations));
  if (badRelations.length) {
    throw fail(RESOURCE_UNKNOWN_RELATION, `Resource "${name}" includable names unknown relations: ${badRelations.join(", ")}`);
  }
}
