import type { MigrationStep } from "./diff.js";
import { hasPlainIndex, hasVectorIndex, indexName, uniqueIndexName, DdlError } from "./ddl.js";
import { searchIndexName } from "./search-ddl.js";

/**
 * PostgreSQL cuts identifiers to 63 bytes (names are ASCII, so characters), and tables and indexes
 * share one namespace per schema. Two of Trellis's derived index names that agree in their first
 * 63 characters would fail the step that creates the second with `relation "..." already exists`;
 * this finds them when the app is built. A single long name is fine (Postgres cuts it the same way
 * in `create` and `drop`), so histories applied with long names keep working.
 */
const LIMIT = 63;

export function checkPostgresNames(steps: readonly MigrationStep[]): void {
  // Cut name -> what owns it, for every table and index the history leaves in place at each step.
  const live = new Map<string, { full: string; owner: string }>();
  const problems: string[] = [];
  const add = (full: string, owner: string) => {
    const cut = full.slice(0, LIMIT);
    const other = live.get(cut);
    if (other && other.full !== full) {
      problems.push(
        `PostgreSQL cuts names to ${LIMIT} bytes, so the indexes of ${other.owner} and ${owner} would both be named ${JSON.stringify(cut)}. ` +
          `Shorten the table or column names so that the index names differ within their first ${LIMIT} bytes.`,
      );
      return;
    }
    live.set(cut, { full, owner });
  };
  const drop = (full: string) => live.delete(full.slice(0, LIMIT));
  for (const step of steps) {
    const version = JSON.stringify(step.version);
    const columnIndexes = (table: string, name: string, column: Parameters<typeof hasPlainIndex>[0]) => {
      const owner = `${table}.${name} (version ${version})`;
      if (column.unique && !column.primaryKey) add(uniqueIndexName(table, name), owner);
      if (hasPlainIndex(column) || hasVectorIndex(column)) add(indexName(table, name), owner);
    };
    step.dropIndexes.forEach(drop);
    for (const change of step.createIndexes) {
      add(change.kind === "unique" ? uniqueIndexName(change.table, change.column) : indexName(change.table, change.column), `${change.table}.${change.column} (version ${version})`);
    }
    for (const table of step.createTables) {
      add(table.name, `table ${table.name} (version ${version})`);
      for (const [name, column] of Object.entries(table.columns)) columnIndexes(table.name, name, column);
    }
    for (const added of step.addColumns) columnIndexes(added.table, added.name, added.column);
    for (const change of step.search) {
      if (change.drop) drop(searchIndexName(change.table));
      if (change.create) add(searchIndexName(change.table), `the full-text index of ${change.table} (version ${version})`);
    }
  }
  if (problems.length > 0) throw new DdlError(problems.join("\n"));
}
