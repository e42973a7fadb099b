import { authTables } from "./auth-tables.js";
import type { ColumnModels } from "./columns.js";
import { organizationTables } from "./organization-tables.js";
import { fileTable } from "./files-tables.js";
import type { ColumnModel, ColumnType, RelationModel, SchemaModel, SearchModel } from "./model.js";
import { searchProblems } from "./search.js";
import { mergeSignIn } from "./signin-tables.js";

/** The builder's state: a `SchemaModel` before tables get their `name`. Never mutated; calls copy it. */
export interface Draft {
  readonly version: string;
  readonly tables: Readonly<Record<string, ColumnModels>>;
  readonly relations: Readonly<Record<string, Readonly<Record<string, RelationModel>>>>;
  readonly auth?: SchemaModel["auth"];
  readonly files?: SchemaModel["files"];
  /** `.search()` by table; `null` where a version removed an earlier version's index. */
  readonly search?: Readonly<Record<string, SearchModel | null>>;
}

// Quoting would allow more, but these names also become URL segments, procedure names and index names.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkName(kind: "table" | "column" | "relation", name: string): void {
  if (typeof name !== "string" || !IDENTIFIER.test(name)) {
    throw new TypeError(`Invalid ${kind} name ${JSON.stringify(name)}: use letters, digits and underscores`);
  }
}

/** The columns `.auth()` and `.files()` rely on, by table; derived from the flags so `.extend()` keeps them. */
function coreTables(draft: Draft): Record<string, ColumnModels> {
  const auth = draft.auth ? mergeSignIn(authTables(draft.auth.apiKeys), draft.auth) : {};
  const organizations = draft.auth?.organizations ? organizationTables(draft.auth.organizations) : {};
  return {
    ...auth,
    ...organizations,
    ...(auth.session && { session: { ...auth.session, ...organizations.session } }),
    ...(draft.files ? { file: fileTable(draft.files.owner, draft.files.placeholder, draft.files.organizations) } : {}),
  };
}

/** A core column may be redeclared (to add an index, a default, an enum), never changed in kind. */
export function coreProblems(draft: Draft, only?: string): string[] {
  const problems: string[] = [];
  for (const [table, columns] of Object.entries(coreTables(draft))) {
    if (only !== undefined && table !== only) continue;
    const owner = table === "file" ? ".files()" : ".auth()";
    for (const [name, core] of Object.entries(columns)) {
      const actual = draft.tables[table]?.[name];
      const where = `${table}.${name}`;
      if (!actual) problems.push(`${where} is required by ${owner} and cannot be removed`);
      else if (actual.type !== core.type) {
        problems.push(`${where} is a ${core.type} column required by ${owner}; it cannot become ${actual.type}`);
      } else if (actual.primaryKey !== core.primaryKey) {
        problems.push(`${where} must ${core.primaryKey ? "stay" : "not become"} the primary key (${owner})`);
      } else if (core.nullable && !actual.nullable && !actual.default) {
        problems.push(`${where} must stay nullable or get a default: ${owner} inserts rows without it`);
      } else if (
        core.references &&
        (actual.references?.table !== core.references.table || actual.references.column !== core.references.column)
      ) {
        problems.push(`${where} must keep its reference to ${core.references.table}.${core.references.column}`);
      }
    }
  }
  return problems;
}

// Families whose values compare equal in both databases, so a foreign key between them is valid DDL.
const family = (type: ColumnType): string =>
  type === "serial" || type === "integer" || type === "bigint" ? "integer" : type === "varchar" ? "text" : type;

function columnProblems(tables: Draft["tables"], table: string, name: string, column: ColumnModel): string[] {
  const where = `${table}.${name}`;
  const problems: string[] = [];
  if (column.primaryKey && column.nullable) problems.push(`${where} is a primary key and cannot be nullable`);
  const ref = column.references;
  if (!ref) return problems;
  const target = tables[ref.table]?.[ref.column];
  if (!tables[ref.table]) problems.push(`${where} references missing table "${ref.table}"`);
  else if (!target) problems.push(`${where} references missing column ${ref.table}.${ref.column}`);
  else {
    // Both databases require the referenced column to be unique.
    if (!target.primaryKey && !target.unique) {
      problems.push(`${where} references ${ref.table}.${ref.column}, which is neither a primary key nor unique`);
    }
    if (family(target.type) !== family(column.type)) {
      problems.push(`${where} is ${column.type} but references ${ref.table}.${ref.column} of type ${target.type}`);
    }
  }
  if ((ref.onDelete === "set null" || ref.onUpdate === "set null") && !column.nullable) {
    problems.push(`${where} uses "set null" but is not nullable`);
  }
  return problems;
}

function relationProblems(tables: Draft["tables"], relation: RelationModel): string[] {
  const { table, name, target, from, to, via, pivotFrom, pivotTo } = relation;
  const where = `relation ${table}.${name}`;
  const has = (t: string | undefined, c: string | undefined) => t !== undefined && c !== undefined && !!tables[t]?.[c];
  const problems: string[] = [];
  if (!tables[table]) return [`${where} is declared on missing table "${table}"`];
  if (!tables[target]) return [`${where} targets missing table "${target}"`];
  if (!has(table, from)) problems.push(`${where}: "from" column ${table}.${from} does not exist`);
  if (!has(target, to)) problems.push(`${where}: "to" column ${target}.${to} does not exist`);
  if (relation.kind === "manyToMany") {
    if (via === undefined || !tables[via]) problems.push(`${where}: pivot table "${via}" does not exist`);
    else {
      if (!has(via, pivotFrom)) problems.push(`${where}: pivot column ${via}.${pivotFrom} does not exist`);
      if (!has(via, pivotTo)) problems.push(`${where}: pivot column ${via}.${pivotTo} does not exist`);
    }
  }
  return problems;
}

function featureProblems(draft: Draft): string[] {
  const { files, tables } = draft;
  if (!files) return [];
  const problems: string[] = [];
  if (files.owner && !draft.auth) problems.push(`.files() with owner needs .auth() (file.userId references user.id)`);
  if (files.organizations && !draft.auth?.organizations) {
    problems.push(`.files({ organizations: true }) needs .auth({ organizations: true }) (file.organizationId references organization.id)`);
  }
  for (const target of files.attachTo) {
    if (!tables[target]) problems.push(`.files() attachTo table "${target}" does not exist`);
    else if (!tables[`${target}_file`]) problems.push(`.files() attachTo table "${target}" must be declared before .files()`);
  }
  return problems;
}

/** Every problem of a draft, each naming its table and column; empty when the schema is sound. */
export function schemaProblems(draft: Draft): string[] {
  const problems = [...featureProblems(draft), ...coreProblems(draft)];
  for (const [table, columns] of Object.entries(draft.tables)) {
    const entries = Object.entries(columns);
    if (entries.length === 0) problems.push(`table "${table}" has no columns`);
    const keys = entries.filter(([, column]) => column.primaryKey).map(([name]) => name);
    if (keys.length > 1) problems.push(`table "${table}" has ${keys.length} primary keys (${keys.join(", ")}); at most one is allowed`);
    for (const [name, column] of entries) problems.push(...columnProblems(draft.tables, table, name, column));
  }
  for (const relations of Object.values(draft.relations)) {
    for (const relation of Object.values(relations)) problems.push(...relationProblems(draft.tables, relation));
  }
  for (const [table, search] of Object.entries(draft.search ?? {})) if (search) problems.push(...searchProblems(draft.tables, table, search));
  return problems;
}
