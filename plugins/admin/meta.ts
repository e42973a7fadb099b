import { primaryKeyOf, type AppDatabase, type DatabaseKind, type ResourceRegistry, type SealedApp } from "../../kernel/index.js";
import type { AdminTable } from "./tables.js";
import { secretColumns } from "./secrets.js";

export interface AdminColumn {
  name: string;
  type: string;
  nullable: boolean;
  primaryKey: boolean;
  unique: boolean;
  /** Has a database default (the value may be left out on create). */
  hasDefault: boolean;
  /** The foreign key as the schema declares it, its `onDelete`/`onUpdate` actions included. */
  references?: { table: string; column: string; onDelete?: string; onUpdate?: string };
  enum?: { values: string[]; multiple: boolean };
  /** A credential: redacted in every output, refused in filters and orderings. */
  secret: boolean;
  /** Set by the database (serial), never by a write. */
  readonly: boolean;
  /** A vector column (`nearest` searches it): its length and distance. */
  vector?: { dimensions: number; distance: string };
}

export interface AdminTableInfo {
  name: string;
  primaryKey: string | null;
  rows: number;
  /** False for the auth library's credential tables and the files plugin's tables (`file`, its attach pivots). */
  writable: boolean;
  columns: AdminColumn[];
  relations: { name: string; kind: string; target: string; from: string; to: string; via?: string }[];
  /** The primary key, unique constraints and `.index()` indexes the schema declares. */
  indexes: { name: string; columns: string[]; kind: "primary" | "unique" | "index" }[];
  /**
   * The full-text index (`search` on `_admin.data.list` works only with one): its columns and
   * language; null without one, or when it holds a secret column (such a search is refused).
   */
  search: { columns: string[]; language: string } | null;
}

export interface AdminMeta {
  name: string;
  kind: DatabaseKind;
  versions: string[];
  tables: AdminTableInfo[];
  /** `tenant`: the column holding the row's organization on a tenant-scoped resource, else null. */
  resources: { name: string; table: string; permissions: Record<string, string>; procedures: Record<string, string>; ownerColumn: string | null; tenant: string | null; includable: string[] }[];
  /** Which surfaces the app serves (plugin names, plus `rpc` and the dashboard). */
  surfaces: Record<string, boolean>;
  plugins: string[];
  /** The other plugins' sections under `_admin` (`mail`, `jobs`, `organizations`, ...): what the app serves there. */
  sections: string[];
}

/** Plugin names that stand for a surface or a feature an admin wants to see at a glance. */
const SURFACE_PLUGINS = ["auth", "resources", "openapi", "mcp", "files", "live", "health", "rate-limit", "cors"];

export async function describeApp(
  sealed: SealedApp,
  db: AppDatabase<any>,
  kind: DatabaseKind,
  tables: ReadonlyMap<string, AdminTable>,
  registry: ResourceRegistry | undefined,
  plugins: readonly string[],
  dashboard: boolean,
  sections: readonly string[] = [],
): Promise<AdminMeta> {
  const counts = await Promise.all([...tables.keys()].map((name) => (db.query as Record<string, any>)[name].count() as Promise<number>));
  return {
    name: sealed.name,
    kind,
    versions: sealed.schemas.map((schema) => schema.version),
    tables: [...tables.values()].map((table, i) => tableInfo(table, counts[i]!, sealed)),
    resources: [...(registry?.values() ?? [])].map((resource) => ({
      name: resource.name,
      table: resource.table.name,
      permissions: { ...resource.permissions },
      procedures: { ...resource.procedures } as Record<string, string>,
      ownerColumn: resource.ownerColumn ?? null,
      tenant: resource.tenant ?? null,
      includable: [...resource.includable],
    })),
    surfaces: {
      rpc: true,
      ...Object.fromEntries(SURFACE_PLUGINS.map((name) => [name, plugins.includes(name)])),
      dashboard,
    },
    plugins: [...plugins],
    sections: [...sections],
  };
}

function tableInfo(table: AdminTable, rows: number, sealed: SealedApp): AdminTableInfo {
  const { model } = table;
  const secrets = secretColumns(model.name);
  return {
    name: model.name,
    primaryKey: primaryKeyOf(model) ?? null,
    rows,
    writable: table.writable,
    columns: Object.entries(model.columns).map(([name, column]) => ({
      name,
      type: column.type,
      nullable: column.nullable,
      primaryKey: column.primaryKey,
      unique: column.unique,
      hasDefault: column.default !== undefined,
      ...(column.references && { references: { ...column.references } }),
      ...(column.enum && { enum: { values: [...column.enum.values], multiple: column.enum.multiple } }),
      secret: secrets.includes(name),
      readonly: !table.settable.includes(name),
      ...(column.vector && { vector: { dimensions: column.vector.dimensions, distance: column.vector.distance } }),
    })),
    relations: Object.values(sealed.schema.relations[model.name] ?? {}).map((relation) => ({
      name: relation.name,
      kind: relation.kind,
      target: relation.target,
      from: relation.from,
      to: relation.to,
      ...(relation.via && { via: relation.via }),
    })),
    indexes: Object.entries(model.columns).flatMap(([name, column]): AdminTableInfo["indexes"] =>
      column.primaryKey
        ? [{ name: `${model.name}_pkey`, columns: [name], kind: "primary" }]
        : column.unique
          ? [{ name: `${model.name}_${name}_key`, columns: [name], kind: "unique" }]
          : column.index
            ? [{ name: `${model.name}_${name}_idx`, columns: [name], kind: "index" }]
            : [],
    ),
    search: model.search && !Object.keys(model.search.columns).some((column) => secrets.includes(column))
      ? { columns: Object.keys(model.search.columns), language: model.search.language }
      : null,
  };
}
