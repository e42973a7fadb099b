/**
 * The schema chain: `schema("1").auth().table(...).relation(...).build()`. Each call returns a new
 * builder over a new draft, so a shared base (`const base = schema("2").extend(v1)`) can be branched
 * safely. Types grow by one delta per call; the runtime draft is plain data checked once at `.build()`.
 */
import { authRelations, authTables, type AuthOptions, type ApiKeyTables, type AuthRelations, type AuthTables } from "./auth-tables.js";
import { organizationRelations, organizationTables, organizationsModel, type OrganizationRelations, type OrganizationTablesOf, type OrganizationsFlag } from "./organization-tables.js";
import { columnModels, t, type ColumnBuilder, type ColumnModels, type ColumnsShape, type Describe } from "./columns.js";
import { SCHEMA_ERRORS, SchemaError } from "./errors.js";
import {
  fileRelations,
  fileTable,
  pivotTable,
  type FileRelations,
  type FilesOptions,
  type FileTables,
  type EntityIdOf,
  type PivotTables,
} from "./files-tables.js";
import { mergeSignIn, signInFlags, type SignInTables } from "./signin-tables.js";
import { primaryKeyOf, type RelationModel, type SchemaModel, type TableModel } from "./model.js";
import { searchModel, searchProblems, type SearchColumns, type SearchOptions } from "./search.js";
import { rel, relationModel, type DescribeRelations, type RelationBuilder, type RelationDef } from "./relations.js";
import type { AddTable, MergeTables, SchemaResult } from "./types.js";
import { checkName, coreProblems, schemaProblems, type Draft } from "./validate.js";

type Names<TTables> = keyof TTables & string;

export interface SchemaBuilder<TTables, TRelations> {
  /** Defines a table, or adds columns to one already declared (the later declaration wins a name). */
  table<N extends string, C extends ColumnsShape>(
    name: N,
    define: (t: ColumnBuilder) => C,
  ): SchemaBuilder<AddTable<TTables, N, Describe<C>>, TRelations>;
  /** Declares named relations from `table`; calling it again for the same table merges the names. */
  relation<N extends Names<TTables>, R extends Record<string, RelationDef>>(
    table: N,
    define: (rel: RelationBuilder<TTables, N>) => R,
  ): SchemaBuilder<TTables, AddTable<TRelations, N, DescribeRelations<R>>>;
  /**
   * A full-text index over text columns of `table` (declared earlier in the chain): `["title", "body"]`
   * weighs every column alike, `{ title: "A", body: "B" }` ranks title matches higher (A highest, D
   * lowest). Resource lists then take `search: "words"`. `false` removes an earlier version's index.
   */
  search<N extends Names<TTables>>(
    table: N,
    columns: SearchColumns<keyof TTables[N] & string> | false,
    options?: SearchOptions,
  ): SchemaBuilder<TTables, TRelations>;
  /** Deep-merges an earlier version's tables and relations; this builder's columns and relations win. */
  extend<T2, R2>(previous: SchemaResult<T2, R2>): SchemaBuilder<MergeTables<T2, TTables>, MergeTables<R2, TRelations>>;
  /**
   * Adds better-auth's tables (with the admin plugin's fields) and their relations; `apiKeys` adds
   * the API-key plugin's table, `twoFactor`, `passkeys` and `sso` those of the further sign-in
   * methods (docs/sign-in.md), `organizations` the organization plugin's (docs/organizations.md).
   */
  auth<A extends boolean = false, T extends boolean = false, P extends boolean = false, S extends boolean = false, O extends OrganizationsFlag = false>(
    options?: AuthOptions & { apiKeys?: A; twoFactor?: T; passkeys?: P; sso?: S; organizations?: O },
  ): SchemaBuilder<
    MergeTables<MergeTables<TTables, (A extends true ? AuthTables & ApiKeyTables : AuthTables) & SignInTables<T, P, S>>, OrganizationTablesOf<O>>,
    MergeTables<TRelations, [O] extends [false] ? AuthRelations : AuthRelations & OrganizationRelations>
  >;
  /** Adds the `file` table and, per `attachTo` entry, a pivot table and relations both ways. */
  files<O extends boolean = true, const X extends readonly Names<TTables>[] = [], P extends boolean = false, G extends boolean = false>(
    options?: FilesOptions<O, X> & { placeholder?: P; organizations?: G },
  ): SchemaBuilder<
    // The keys are resolved here, inline, so declaration files do not repeat the whole table map.
    MergeTables<TTables, FileTables<O, P, G> & PivotTables<{ [K in X[number]]: EntityIdOf<TTables[K]> }>>,
    MergeTables<TRelations, FileRelations<O, X[number]>>
  >;
  /** Validates the whole schema and returns it deeply frozen. */
  build(): SchemaResult<TTables, TRelations>;
}

type Relations = Record<string, Record<string, RelationModel>>;

/** `over` merged into `under` one level deep; `over` wins a name, `under` keeps its order. */
function mergeDeep<V>(under: Record<string, Record<string, V>>, over: Record<string, Record<string, V>>) {
  const out: Record<string, Record<string, V>> = { ...under };
  for (const [key, value] of Object.entries(over)) out[key] = { ...under[key], ...value };
  return out;
}

const KINDS = new Set(["hasMany", "hasOne", "belongsTo", "manyToMany"]);

function named(defs: Record<string, Record<string, RelationDef>>): Relations {
  const out: Relations = {};
  for (const [table, byName] of Object.entries(defs)) {
    out[table] = {};
    for (const [name, def] of Object.entries(byName)) {
      checkName("relation", name);
      if (!KINDS.has(def?.kind)) throw new TypeError(`${table}.${name} is not a relation (build it with rel.*())`);
      out[table][name] = relationModel(table, name, def);
    }
  }
  return out;
}

// Column models arrive frozen at their top level, so a frozen object does not mean a frozen subtree.
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

class Builder {
  constructor(private readonly draft: Draft) {}

  private next(patch: Partial<Draft>): Builder {
    return new Builder({ ...this.draft, ...patch });
  }

  table(name: string, define: (b: ColumnBuilder) => ColumnsShape): Builder {
    checkName("table", name);
    if (typeof define !== "function") throw new TypeError(`.table("${name}") needs a define callback`);
    const columns = columnModels(define(t), name);
    for (const column of Object.keys(columns)) checkName("column", column);
    const next = this.next({ tables: mergeDeep(this.draft.tables, { [name]: columns }) });
    // Fail at the offending call rather than at build, where the cause would be far away.
    const problems = coreProblems(next.draft, name);
    if (problems.length > 0) throw new SchemaError(SCHEMA_ERRORS.CORE_COLUMN, this.draft.version, problems);
    return next;
  }

  relation(table: string, define: (r: RelationBuilder<any, string>) => Record<string, RelationDef>): Builder {
    if (typeof define !== "function") throw new TypeError(`.relation("${table}") needs a define callback`);
    return this.next({ relations: mergeDeep(this.draft.relations, named({ [table]: define(rel) })) });
  }

  search(table: string, columns: unknown, options?: SearchOptions): Builder {
    let model: ReturnType<typeof searchModel> | null = null;
    if (columns !== false) {
      model = searchModel(table, columns, options);
      const problems = Array.isArray(model) ? model : searchProblems(this.draft.tables, table, model);
      if (problems.length > 0) throw new SchemaError(SCHEMA_ERRORS.SEARCH, this.draft.version, problems);
    }
    return this.next({ search: { ...this.draft.search, [table]: model as Exclude<typeof model, string[]> } });
  }

  extend(previous: SchemaModel): Builder {
    if (!previous || typeof previous.tables !== "object" || typeof previous.relations !== "object") {
      throw new TypeError(".extend() takes a built schema (the result of .build())");
    }
    const tables = Object.fromEntries(Object.entries(previous.tables).map(([name, table]) => [name, table.columns]));
    const search = Object.fromEntries(Object.values(previous.tables).flatMap((table) => (table.search ? [[table.name, table.search]] : [])));
    return this.next({
      search: { ...search, ...this.draft.search },
      tables: mergeDeep(tables, this.draft.tables),
      relations: mergeDeep(previous.relations as Relations, this.draft.relations as Relations),
      auth: this.draft.auth ?? previous.auth,
      files: this.draft.files ?? previous.files,
    });
  }

  auth(options: AuthOptions & { organizations?: OrganizationsFlag } = {}): Builder {
    const apiKeys = options.apiKeys === true || this.draft.auth?.apiKeys === true;
    const signIn = signInFlags(options, this.draft.auth);
    const roles = options.roles === undefined ? this.draft.auth?.roles : checkRoles(options.roles);
    const organizations = organizationsModel(options.organizations, this.draft.auth?.organizations);
    let tables = mergeDeep(this.draft.tables, mergeSignIn(authTables(apiKeys), signIn));
    let relations = mergeDeep(this.draft.relations, named(authRelations()));
    if (organizations) {
      tables = mergeDeep(tables, organizationTables(organizations));
      relations = mergeDeep(relations, named(organizationRelations(organizations)));
    }
    return this.next({
      tables,
      relations,
      auth: { ...(roles !== undefined && { roles }), apiKeys, ...signIn, ...(organizations && { organizations }) },
    });
  }

  files(options: FilesOptions<boolean, readonly string[]> = {}): Builder {
    const owner = options.owner ?? true;
    const attachTo = [...new Set([...(this.draft.files?.attachTo ?? []), ...(options.attachTo ?? [])])];
    if (owner && attachTo.includes("user")) {
      throw new TypeError(`.files() cannot attach to "user" while owner is on: both would be named file.user`);
    }
    const placeholder = options.placeholder ?? this.draft.files?.placeholder ?? false;
    const organizations = options.organizations ?? this.draft.files?.organizations ?? false;
    const tables: Record<string, ColumnModels> = { file: fileTable(owner, placeholder, organizations) };
    const targets: { table: string; key: string }[] = [];
    for (const target of attachTo) {
      checkName("table", target);
      const columns = this.draft.tables[target];
      if (!columns) continue; // Reported by build(), once the whole chain is known.
      const key = primaryKeyOf({ name: target, columns } satisfies TableModel);
      if (key === undefined) throw new TypeError(`.files() cannot attach to "${target}": it has no primary key`);
      tables[`${target}_file`] = pivotTable(target, key, columns[key]);
      targets.push({ table: target, key });
    }
    return this.next({
      tables: mergeDeep(this.draft.tables, tables),
      relations: mergeDeep(this.draft.relations, named(fileRelations(owner, targets))),
      files: { owner, attachTo, ...(placeholder ? { placeholder } : {}), ...(organizations ? { organizations } : {}) },
    });
  }

  build(): SchemaModel {
    const { version, relations, auth, files } = this.draft;
    const problems = schemaProblems(this.draft);
    if (problems.length > 0) throw new SchemaError(SCHEMA_ERRORS.INVALID, version, problems);
    const tables: Record<string, TableModel> = {};
    for (const [name, columns] of Object.entries(this.draft.tables)) {
      const search = this.draft.search?.[name];
      tables[name] = search ? { name, columns, search } : { name, columns };
    }
    // Drafts are never mutated (every call copies what it changes), so freezing their parts in place is safe.
    return deepFreeze({ version, tables, relations, ...(auth ? { auth } : {}), ...(files ? { files } : {}) });
  }
}

function checkRoles(roles: readonly string[]): readonly string[] {
  if (!Array.isArray(roles)) throw new TypeError(".auth() roles must be an array of strings");
  for (const role of roles) {
    if (typeof role !== "string" || role.trim() === "" || role.includes(",")) {
      // Roles are stored comma-separated in user.role, so a comma would split one role into two.
      throw new TypeError(`.auth() role ${JSON.stringify(role)} must be a non-empty string without commas`);
    }
  }
  return [...new Set(roles)];
}

/** Starts a schema version; `version` is free-form and shown in the OpenAPI document and admin API. */
export function schema(version: string): SchemaBuilder<{}, {}> {
  if (typeof version !== "string" || version.trim() === "") throw new TypeError("schema(version) needs a non-empty string");
  return new Builder({ version, tables: {}, relations: {} }) as unknown as SchemaBuilder<{}, {}>;
}
