import type { CompiledQuery, QueryResult } from "kysely";

/** A committed write made through the app's database. */
export interface ChangeEvent {
  readonly table: string;
  readonly op: "insert" | "update" | "delete";
  /**
   * Primary-key values of the rows written, when the statement returned them (`RETURNING` the key);
   * absent when unknown, so a listener must then treat the whole table as changed.
   */
  readonly keys?: readonly unknown[];
  /**
   * The rows as the statement returned them (`RETURNING`): the new values after an insert or update,
   * the removed rows of a delete. A column the statement did not return is unknown. Absent when the
   * statement returned no rows, is raw SQL, or rewrote a primary key (its old key is then unknown).
   * Live queries match these against their filters to re-run only the queries a write can affect.
   */
  readonly rows?: readonly Readonly<Record<string, unknown>>[];
}

/**
 * Where change events go. The dialect layer records every write statement; events of a
 * transaction are held until it commits and dropped when it (or the savepoint they belong to) rolls
 * back. Inactive (no listener) it records nothing, so apps without live queries pay one branch.
 */
export class ChangeFeed {
  readonly #listeners: ((change: ChangeEvent) => void)[] = [];
  keyOf: (table: string) => string | undefined = () => undefined;

  get active(): boolean {
    return this.#listeners.length > 0;
  }

  listen(listener: (change: ChangeEvent) => void): void {
    this.#listeners.push(listener);
  }

  emit(change: ChangeEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        // A listener's failure must not turn a committed write into a failed request.
        console.error("[trellis] a change listener threw:", error);
      }
    }
  }

  /** The change a statement made, or undefined for reads, DDL and statements it cannot attribute. */
  changeOf(query: CompiledQuery, result: QueryResult<unknown>): ChangeEvent | undefined {
    const found = writeOf(query);
    if (!found) return undefined;
    const key = this.keyOf(found.table);
    const rows = result.rows as Record<string, unknown>[] | undefined;
    if (key && rows && rows.length > 0 && key in rows[0]!) {
      const keys = rows.map((row) => row[key]);
      return found.exact && !rewritesKey(query.query as Node, key) ? { table: found.table, op: found.op, keys, rows } : { table: found.table, op: found.op, keys };
    }
    return { table: found.table, op: found.op };
  }
}

type Node = { kind: string; [key: string]: any };

function tableName(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === "AliasNode") return tableName(node.node);
  if (node.kind === "TableNode") return node.table?.identifier?.name;
  return undefined;
}

const RAW_WRITE = /^\s*(?:with\b[\s\S]*?\)\s*)?(insert\s+into|update|delete\s+from)\s+(?:only\s+)?(?:"?[\w]+"?\.)?"?([\w]+)"?/i;

/** An update (or an upsert's update) that sets the primary key: the returned key is not the old one. */
function rewritesKey(node: Node, key: string): boolean {
  const updates: Node[] = [...(node.updates ?? []), ...(node.onConflict?.updates ?? [])];
  return updates.some((update) => update.column?.kind !== "ColumnNode" || update.column.column?.name === key);
}

/** The table and verb of a write; `exact` when built by Kysely (a raw statement's rows are not trusted). */
function writeOf(query: CompiledQuery): { table: string; op: ChangeEvent["op"]; exact: boolean } | undefined {
  const node = query.query as Node;
  switch (node.kind) {
    case "SelectQueryNode":
      return undefined;
    case "InsertQueryNode": {
      const table = tableName(node.into);
      return table ? { table, op: "insert", exact: true } : undefined;
    }
    case "UpdateQueryNode": {
      const table = tableName(node.table);
      return table ? { table, op: "update", exact: true } : undefined;
    }
    case "DeleteQueryNode": {
      const table = tableName(node.from?.froms?.[0]);
      return table ? { table, op: "delete", exact: true } : undefined;
    }
    case "RawNode": {
      const match = RAW_WRITE.exec(query.sql);
      if (!match) return undefined;
      const verb = match[1]!.toLowerCase();
      return { table: match[2]!, op: verb.startsWith("insert") ? "insert" : verb.startsWith("update") ? "update" : "delete", exact: false };
    }
    default:
      return undefined;
  }
}
