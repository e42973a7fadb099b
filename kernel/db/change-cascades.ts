import type { SchemaModel } from "../schema/model.js";
import type { ForeignKeyAction } from "../schema/model.js";

/**
 * Writes the database carries on through foreign keys. A delete of a `user` row deletes the posts
 * that reference it (`onDelete: "cascade"`) or clears their column (`"set null"`); an update of a
 * referenced key does the same under `onUpdate`; `TRUNCATE ... CASCADE` empties every referencing
 * table. No statement names those tables, so the change feed reports them itself, as changes that
 * name no rows (every live query on them re-runs).
 */

/** A column of `table` that references `column` of another table. */
export interface Reference {
  readonly table: string;
  readonly from: string;
  readonly column: string;
  readonly onDelete?: ForeignKeyAction;
  readonly onUpdate?: ForeignKeyAction;
}

/** What a write can set off: rows it deleted, the columns it rewrote ("any" when unknown), a truncate's cascade. */
export interface Reach {
  readonly deletes?: boolean;
  readonly sets?: ReadonlySet<string> | "any";
  readonly truncates?: boolean;
}

/** The references to each table, from the schema. */
export function referencesOf(model: SchemaModel): ReadonlyMap<string, readonly Reference[]> {
  const out = new Map<string, Reference[]>();
  for (const table of Object.values(model.tables)) {
    for (const [from, column] of Object.entries(table.columns)) {
      const target = column.references;
      if (!target) continue;
      const list = out.get(target.table) ?? [];
      list.push({ table: table.name, from, column: target.column, onDelete: target.onDelete, onUpdate: target.onUpdate });
      out.set(target.table, list);
    }
  }
  return out;
}

const CARRIES = new Set<ForeignKeyAction | undefined>(["cascade", "set null"]);

/** The tables (and how) a write to `table` changes through foreign keys, transitively. */
export function cascadesOf(references: ReadonlyMap<string, readonly Reference[]>, table: string, reach: Reach): { table: string; op: "update" | "delete" }[] {
  const out: { table: string; op: "update" | "delete" }[] = [];
  const seen = new Set<string>();
  const visit = (name: string, { deletes, sets, truncates }: Reach) => {
    for (const ref of references.get(name) ?? []) {
      let op: "update" | "delete" | undefined;
      if (truncates || (deletes && ref.onDelete === "cascade")) op = "delete";
      else if (deletes && CARRIES.has(ref.onDelete)) op = "update";
      else if (sets && (sets === "any" || sets.has(ref.column)) && CARRIES.has(ref.onUpdate)) op = "update";
      if (!op || seen.has(`${ref.table}\u0000${op}`)) continue;
      seen.add(`${ref.table}\u0000${op}`);
      out.push({ table: ref.table, op });
      visit(ref.table, op === "delete" ? { deletes: true, truncates } : { sets: new Set([ref.from]) });
    }
  };
  visit(table, reach);
  return out;
}
