import { AsyncLocalStorage } from "node:async_hooks";
import type { CompiledQuery, QueryResult } from "kysely";
import { cascadesOf, type Reach, type Reference } from "./change-cascades.js";
import type { WriteSetting } from "./write-setting.js";

/**
 * Who made a write, as far as the app knows: the signed-in user (a session cookie or bearer token),
 * an API key's user, a job's handler, or an anonymous caller. `admin` marks a write made through
 * `_admin.data` (the user is then the administrator).
 */
export interface WriteActor {
  readonly kind: "user" | "apiKey" | "job" | "anonymous";
  readonly userId: string | null;
  readonly admin: boolean;
}

/** What a write path (a resource, `_admin.data`) tells the change feed about the writes it makes. */
export interface WriteAttribution {
  /** The table the attribution is for; writes to other tables (a hook's own) are not attributed. */
  readonly table: string;
  readonly actor: WriteActor;
  /** The rows as they were before an update, by primary key (`String(key)`). */
  readonly before?: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
}

const attribution = new AsyncLocalStorage<WriteAttribution>();

/**
 * Runs `fn` with its writes to `info.table` attributed: their change events carry `actor` (and
 * `before` for updates whose old rows are given). Writes made elsewhere carry neither.
 */
export function attributeWrites<T>(info: WriteAttribution, fn: () => T): T {
  return attribution.run(info, fn);
}

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
  /**
   * The rows before the change, in the order of `rows`: the removed rows of a delete, and the old
   * rows of an update made through a resource or `_admin.data` that read them (resource hooks on
   * update, or a listener that asked for them). Absent when unknown.
   */
  readonly before?: readonly (Readonly<Record<string, unknown>> | undefined)[];
  /** Who made the write, for writes through a resource or `_admin.data`; absent for raw writes. */
  readonly actor?: WriteActor;
}

/**
 * Where change events go. The dialect layer records every write statement; events of a
 * transaction are held until it commits and dropped when it (or the savepoint they belong to) rolls
 * back. Inactive (no listener) it records nothing, so apps without live queries pay one branch.
 */
export class ChangeFeed {
  readonly #listeners: ((change: ChangeEvent) => void)[] = [];
  keyOf: (table: string) => string | undefined = () => undefined;
  /** The foreign keys referencing each table, so writes they carry on are reported too (change-cascades.ts). */
  references: ReadonlyMap<string, readonly Reference[]> = new Map();

  /** Sent before writes so triggers can read it (write-setting.ts); undefined until a plugin installs one. */
  writeSetting: WriteSetting | undefined;

  get active(): boolean {
    return this.#listeners.length > 0;
  }

  /** Whether a statement writes (a Kysely insert, update, delete or merge, or a raw write). */
  writes(query: CompiledQuery): boolean {
    return writesOf(query).length > 0;
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

  /**
   * The changes a statement made: none for reads and DDL. A write inside a `WITH`, a `MERGE` and a
   * `TRUNCATE` name their tables only (every listener then treats those tables as changed), and so
   * do the tables foreign keys carry a write on to.
   */
  changesOf(query: CompiledQuery, result: QueryResult<unknown>): ChangeEvent[] {
    const writes = writesOf(query);
    const main = writes.find((write) => write.main);
    const changes: ChangeEvent[] = writes.filter((write) => !write.main).map(({ table, op }) => ({ table, op }));
    changes.push(...this.#cascades(writes.filter((write) => !write.main)));
    if (!main) return changes;
    const rows = result.rows as Record<string, unknown>[] | undefined;
    // A write that matched no row (a refused owner update, a 404) changed nothing: no event.
    if (wroteNothing(query, result, main)) return changes;
    if (this.references.size > 0) changes.push(...cascadesOf(this.references, main.table, main.reach));
    const key = this.keyOf(main.table);
    const info = attribution.getStore();
    const actor = info?.table === main.table ? info.actor : undefined;
    if (main.returns && key && rows && rows.length > 0 && key in rows[0]!) {
      const keys = rows.map((row) => row[key]);
      if (main.exact && !rewritesKey(query.query as Node, key)) {
        const before = main.op === "delete" ? rows : main.op === "update" && actor && info!.before?.size ? keys.map((value) => info!.before!.get(String(value))) : undefined;
        changes.push({ table: main.table, op: main.op, keys, rows, ...(before && { before }), ...(actor && { actor }) });
      } else changes.push({ table: main.table, op: main.op, keys, ...(actor && { actor }) });
    } else changes.push({ table: main.table, op: main.op, ...(actor && { actor }) });
    return changes;
  }

  /** The writes foreign keys carry on from these. */
  #cascades(writes: readonly Write[]): ChangeEvent[] {
    if (this.references.size === 0) return [];
    return writes.flatMap((write) => cascadesOf(this.references, write.table, write.reach));
  }
}

/**
 * The statement's own write touched no row: the driver says so (`numAffectedRows` 0), or a Kysely
 * write with `RETURNING` returned none.
 */
function wroteNothing(query: CompiledQuery, result: QueryResult<unknown>, main: Write): boolean {
  if (result.numAffectedRows === 0n) return true;
  return main.exact && main.returns && !!(query.query as Node).returning && (result.rows?.length ?? 0) === 0;
}

type Node = { kind: string; [key: string]: any };

function tableName(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === "AliasNode") return tableName(node.node);
  if (node.kind === "TableNode") return node.table?.identifier?.name;
  return undefined;
}

/** Whitespace and comments before a raw statement's first word. */
const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;
/** Between two words: whitespace, or none before a quoted name (`delete from"note"`). */
const GAP = String.raw`(?:\s+|(?="))`;
/** A table, optionally schema-qualified: `note`, `"Note"`, `"my notes"`, `app.note`; the name is the last capture. */
const TABLE = String.raw`(?:only${GAP})?(?:(?:"(?:[^"]|"")+"|\w+)\s*\.\s*)?("(?:[^"]|"")+"|\w+)`;
const VERB = String.raw`(insert\s+(?:or\s+\w+\s+)?into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from|merge\s+into|truncate(?:\s+table)?)${GAP}${TABLE}`;
/** A raw statement's own write: its first word. */
const RAW_WRITE = new RegExp(`^${VERB}`, "i");
/** The writes of a raw `WITH` statement: each CTE's (after its `(`) and the statement's own (after the last `)`). */
const RAW_ANY_WRITE = new RegExp(String.raw`(?<=[()]\s*)${VERB}`, "gi");
/** The further tables of `TRUNCATE a, b`. */
const TRUNCATE_LIST = /^truncate(?:\s+table)?(?:\s+|(?="))([^;]*)/i;
const TRUNCATE_ITEM = new RegExp(String.raw`^\s*${TABLE}`, "i");

/** A table name as the statement wrote it, its quotes taken off (`"a""b"` is `a"b`). */
function unquoted(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name;
}

/** An update (or an upsert's update) that sets the primary key: the returned key is not the old one. */
function rewritesKey(node: Node, key: string): boolean {
  const updates: Node[] = [...(node.updates ?? []), ...(node.onConflict?.updates ?? [])];
  return updates.some((update) => update.column?.kind !== "ColumnNode" || update.column.column?.name === key);
}

interface Write {
  table: string;
  op: ChangeEvent["op"];
  /** Built by Kysely (a raw statement's rows are not trusted). */
  exact: boolean;
  /** The statement's own write, whose `RETURNING` rows the result holds. */
  main: boolean;
  /** Whether its `RETURNING` rows can say which rows it wrote (not a merge or a truncate). */
  returns: boolean;
  /** What it can set off through foreign keys. */
  reach: Reach;
}

/** The writes of a statement: its own (`main`) and those of the `WITH` clauses it holds. */
function writesOf(query: CompiledQuery): Write[] {
  const node = query.query as Node;
  if (node.kind === "RawNode") return rawWritesOf(query.sql);
  const writes: Write[] = [];
  const visit = (node: Node, main: boolean) => {
    for (const cte of node.with?.expressions ?? []) if (cte?.expression) visit(cte.expression, false);
    const write = kyselyWriteOf(node);
    if (write) writes.push({ ...write, exact: true, main, returns: main && node.kind !== "MergeQueryNode", reach: kyselyReach(node) });
  };
  visit(node, true);
  return writes;
}

function kyselyWriteOf(node: Node): { table: string; op: ChangeEvent["op"] } | undefined {
  let table: string | undefined;
  let op: ChangeEvent["op"];
  switch (node.kind) {
    case "InsertQueryNode":
      [table, op] = [tableName(node.into), "insert"];
      break;
    case "UpdateQueryNode":
      [table, op] = [tableName(node.table), "update"];
      break;
    case "DeleteQueryNode":
      [table, op] = [tableName(node.from?.froms?.[0]), "delete"];
      break;
    case "MergeQueryNode":
      // Inserts, updates and deletes at once: an update that names no rows.
      [table, op] = [tableName(node.into), "update"];
      break;
    default:
      return undefined;
  }
  return table ? { table, op } : undefined;
}

/** The columns a Kysely write sets, and whether it deletes rows (a delete, a merge, SQLite's `INSERT OR REPLACE`). */
function kyselyReach(node: Node): Reach {
  const updates: Node[] = [...(node.updates ?? []), ...(node.onConflict?.updates ?? [])];
  const named = updates.every((update) => update.column?.kind === "ColumnNode");
  const sets = node.kind === "MergeQueryNode" || !named ? "any" : new Set(updates.map((update) => update.column.column.name as string));
  const deletes = node.kind === "DeleteQueryNode" || node.kind === "MergeQueryNode" || node.replace === true || node.orAction?.action === "replace";
  return { deletes, sets };
}

/** A raw write's reach: anything its verb can do (an insert may be an upsert). */
function rawReach(verb: string, text: string): Reach {
  const word = verb.toLowerCase();
  if (word.startsWith("truncate")) return { deletes: true, truncates: /\bcascade\b/i.test(text) };
  if (word.startsWith("delete")) return { deletes: true };
  return { deletes: word.startsWith("merge") || /\breplace\b/.test(word), sets: "any" };
}

function rawWritesOf(text: string): Write[] {
  const body = text.replace(LEADING, "");
  if (/^with\b/i.test(body)) {
    return [...body.matchAll(RAW_ANY_WRITE)].map((match) => ({ table: unquoted(match[2]!), op: rawOp(match[1]!), exact: false, main: false, returns: false, reach: rawReach(match[1]!, body) }));
  }
  const match = RAW_WRITE.exec(body);
  if (!match) return [];
  const verb = match[1]!.toLowerCase();
  const op = rawOp(verb);
  if (verb.startsWith("truncate")) {
    const list = TRUNCATE_LIST.exec(body)?.[1] ?? "";
    const tables = list.split(",").map((item) => TRUNCATE_ITEM.exec(item)?.[1]).filter((name): name is string => !!name).map(unquoted);
    return tables.map((table) => ({ table, op, exact: false, main: false, returns: false, reach: rawReach(verb, body) }));
  }
  return [{ table: unquoted(match[2]!), op, exact: false, main: true, returns: !verb.startsWith("merge"), reach: rawReach(verb, body) }];
}

function rawOp(verb: string): ChangeEvent["op"] {
  const word = verb.toLowerCase();
  return word.startsWith("insert") || word.startsWith("replace") ? "insert" : word.startsWith("delete") || word.startsWith("truncate") ? "delete" : "update";
}
