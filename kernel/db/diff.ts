import type { ColumnDefault, ColumnModel, SchemaModel, TableModel, VectorDistance } from "../schema/model.js";
import { hasPlainIndex, hasVectorIndex, indexName, uniqueIndexName } from "./ddl.js";

/**
 * The migration of schema version N is its difference from what versions 1..N-1 left in the
 * database (version 0 is empty). Only additive changes are migrated, because each one is safe on
 * both families and on a table full of rows:
 *
 * - new tables (in foreign-key order), new columns that are nullable or defaulted (with their
 *   foreign key, unique and index), indexes and unique constraints added to or dropped from an
 *   existing column, new relations (no DDL);
 * - a table missing from a later version is left in place (no DROP), and keeps its last shape.
 *
 * Adding `.unique()` to an existing column is allowed: it becomes a unique index, and when rows
 * already hold duplicates the step fails at run time and rolls back with the error.
 *
 * Everything else is refused when the app is built, naming table, column and both versions: a
 * changed type, a removed column, a new NOT NULL column without default, nullable to NOT NULL and
 * back, a changed primary key, default, reference or enum set. SQLite can change none of these in
 * place (it would need a table rebuild), and a silent difference between families is worse than a
 * refusal; add a new column instead.
 */

export interface AddedColumn {
  readonly table: string;
  readonly name: string;
  readonly column: ColumnModel;
}

export interface IndexChange {
  readonly table: string;
  readonly column: string;
  readonly kind: "unique" | "index" | "hnsw";
  /** The operator class of an `hnsw` index. */
  readonly distance?: VectorDistance;
}

/** A full-text index to drop (`drop`), create (`create`) or both, in that order (search-ddl.ts). */
export interface SearchChange {
  readonly table: string;
  readonly drop: boolean;
  /** The table as this version declares it, when it has an index to create. */
  readonly create?: TableModel;
}

export interface MigrationStep {
  /** Position in the registered order, from 0. */
  readonly index: number;
  readonly version: string;
  /** The version before, or undefined for the first step (from the empty database). */
  readonly previous?: string;
  readonly createTables: readonly TableModel[];
  readonly addColumns: readonly AddedColumn[];
  readonly createIndexes: readonly IndexChange[];
  /** Index names to drop. */
  readonly dropIndexes: readonly string[];
  /** Full-text indexes declared, changed or removed by this version. */
  readonly search: readonly SearchChange[];
}

export const MIGRATION_ERRORS = {
  /** A schema version changes the database in a way migrations refuse; `problems` lists each. */
  REFUSED: "MIGRATION_REFUSED",
} as const;

export class MigrationPlanError extends Error {
  override readonly name = "MigrationPlanError";
  readonly code = MIGRATION_ERRORS.REFUSED;
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.length === 1 ? problems[0] : `${problems.length} unsafe schema changes:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.problems = Object.freeze([...problems]);
  }
}

/** Every step of an ordered history; throws one `MigrationPlanError` listing every refused change. */
export function planMigrations(models: readonly SchemaModel[]): MigrationStep[] {
  const database = new Map<string, TableModel>();
  const problems: string[] = [];
  const steps = models.map((model, index) => {
    const previous = index > 0 ? models[index - 1]!.version : undefined;
    const step = diffStep(database, model, index, previous, problems);
    for (const table of Object.values(model.tables)) database.set(table.name, table);
    return step;
  });
  if (problems.length > 0) throw new MigrationPlanError(problems);
  return steps;
}

/** Refuses an unsafe history at build time, before anything touches the database. */
export function validateHistory(models: readonly SchemaModel[]): void {
  planMigrations(models);
}

function diffStep(
  database: ReadonlyMap<string, TableModel>,
  model: SchemaModel,
  index: number,
  previous: string | undefined,
  problems: string[],
): MigrationStep {
  const step = { createTables: [] as TableModel[], addColumns: [] as AddedColumn[], createIndexes: [] as IndexChange[], dropIndexes: [] as string[], search: [] as SearchChange[] };
  const refuse = (table: string, column: string, why: string) =>
    problems.push(`Cannot migrate ${table}.${column} from version ${JSON.stringify(previous ?? "0")} to ${JSON.stringify(model.version)}: ${why}`);

  for (const table of Object.values(model.tables)) {
    const before = database.get(table.name);
    const change = searchChange(before, table);
    if (change) step.search.push(change);
    if (!before) {
      step.createTables.push(table);
      continue;
    }
    for (const name of Object.keys(before.columns)) {
      if (!(name in table.columns)) refuse(table.name, name, "the column was removed (columns are never dropped; keep it, nullable if need be)");
    }
    for (const [name, column] of Object.entries(table.columns)) {
      const old = before.columns[name];
      if (!old) {
        const why = newColumnProblem(column);
        if (why) refuse(table.name, name, why);
        else step.addColumns.push({ table: table.name, name, column });
        continue;
      }
      const why = changeProblem(old, column);
      if (why) refuse(table.name, name, why);
      else diffIndexes(table.name, name, old, column, step);
    }
  }
  return { index, version: model.version, ...(previous === undefined ? {} : { previous }), ...step };
}

/** A changed index is dropped and built again: the weights live in every stored vector. */
function searchChange(before: TableModel | undefined, table: TableModel): SearchChange | undefined {
  if (JSON.stringify(before?.search ?? null) === JSON.stringify(table.search ?? null)) return undefined;
  return { table: table.name, drop: before?.search !== undefined, ...(table.search ? { create: table } : {}) };
}

function newColumnProblem(column: ColumnModel): string | undefined {
  if (column.primaryKey) return "a primary key cannot be added to an existing table";
  if (column.type === "serial") return "a serial column cannot be added to an existing table";
  if (!column.nullable && !column.default) return "it is added as NOT NULL without a default, so existing rows would have no value";
  // SQLite refuses `add column ... references` with a non-NULL default.
  if (column.references && column.default) return "a column added with a foreign key cannot have a default";
  return undefined;
}

function changeProblem(old: ColumnModel, next: ColumnModel): string | undefined {
  if (old.type !== next.type) return `its type changed from ${old.type} to ${next.type}`;
  if (old.nullable && !next.nullable) return "it changed from nullable to NOT NULL, which existing NULLs would violate";
  if (!old.nullable && next.nullable) return "it changed from NOT NULL to nullable, which SQLite cannot do in place";
  if (old.primaryKey !== next.primaryKey) return "its primary key changed";
  if (!sameDefault(old.default, next.default)) return "its default changed, which SQLite cannot do in place";
  if (!sameReference(old.references, next.references)) return "its foreign key changed, which SQLite cannot do in place";
  if (!sameEnum(old.enum, next.enum)) return "its enum values changed, which SQLite cannot do in place";
  if (old.vector && next.vector && (old.vector.dimensions !== next.vector.dimensions || old.vector.distance !== next.vector.distance)) {
    return `its vector changed from ${old.vector.dimensions} dimensions (${old.vector.distance}) to ${next.vector.dimensions} (${next.vector.distance}); stored vectors would not fit, add a new column`;
  }
  return undefined;
}

function diffIndexes(table: string, name: string, old: ColumnModel, next: ColumnModel, step: { createIndexes: IndexChange[]; dropIndexes: string[] }): void {
  const wasUnique = old.unique && !old.primaryKey;
  const isUnique = next.unique && !next.primaryKey;
  if (wasUnique && !isUnique) step.dropIndexes.push(uniqueIndexName(table, name));
  if (hasPlainIndex(old) && !hasPlainIndex(next)) step.dropIndexes.push(indexName(table, name));
  if (!wasUnique && isUnique) step.createIndexes.push({ table, column: name, kind: "unique" });
  if (!hasPlainIndex(old) && hasPlainIndex(next)) step.createIndexes.push({ table, column: name, kind: "index" });
  if (hasVectorIndex(old) && !hasVectorIndex(next)) step.dropIndexes.push(indexName(table, name));
  if (!hasVectorIndex(old) && hasVectorIndex(next)) step.createIndexes.push({ table, column: name, kind: "hnsw", distance: next.vector!.distance });
}

function sameDefault(a: ColumnDefault | undefined, b: ColumnDefault | undefined): boolean {
  if (!a || !b) return a === b;
  return a.kind === "sql" ? b.kind === "sql" && a.sql === b.sql : b.kind === "value" && a.value === b.value;
}

function sameReference(a: ColumnModel["references"], b: ColumnModel["references"]): boolean {
  if (!a || !b) return a === b;
  return a.table === b.table && a.column === b.column && (a.onDelete ?? "no action") === (b.onDelete ?? "no action") && (a.onUpdate ?? "no action") === (b.onUpdate ?? "no action");
}

function sameEnum(a: ColumnModel["enum"], b: ColumnModel["enum"]): boolean {
  if (!a || !b) return a === b;
  // Order is not meaning: the CHECK accepts the same set either way.
  const set = new Set(a.values);
  return a.multiple === b.multiple && a.values.length === b.values.length && b.values.every((v) => set.has(v));
}
