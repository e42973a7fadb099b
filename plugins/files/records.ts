import { randomBytes, randomUUID } from "node:crypto";
import { decodeRow, encodeValue, rowSelection, type AppDatabase, type DatabaseKind, type TableModel } from "../../kernel/index.js";
import type { FileRecord } from "./options.js";

type Row = Record<string, unknown>;

/** A stored file's row: its public record and the storage key that never leaves the server. */
export interface StoredFile {
  record: FileRecord;
  key: string;
}

/**
 * What narrows a read by id. `userId`: only that uploader's files. `organizationId` (present only with
 * the column): files of that organization and files uploaded outside any; null: only the latter.
 */
export interface FileScope {
  userId?: string | undefined;
  organizationId?: string | null;
}

type ScopeColumn = [column: "userId" | "organizationId", values: (string | null)[]];

/**
 * The scope column by column, each with the values it may hold (null: uploaded outside any
 * organization): written once for `find` (SQL) and `scopeWhere` (the query API).
 */
function scopeColumns(scope: FileScope): ScopeColumn[] {
  const columns: ScopeColumn[] = [];
  if (scope.userId !== undefined) columns.push(["userId", [scope.userId]]);
  if (scope.organizationId !== undefined) columns.push(["organizationId", scope.organizationId === null ? [null] : [null, scope.organizationId]]);
  return columns;
}

/** The same scope as a query-API condition (`file.list`), or undefined when nothing narrows. */
export function scopeWhere(scope: FileScope): Record<string, unknown> | undefined {
  const conditions = scopeColumns(scope).map(([column, values]) => (values.length === 1 ? { [column]: values[0] } : { OR: values.map((value) => ({ [column]: value })) }));
  return conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : { AND: conditions };
}

/** Ids the plugin could have generated; anything else is answered 404 without a query. */
const ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Reads and writes of the `file` table, one statement each. */
export class FileRows {
  readonly #columns;

  constructor(
    readonly db: AppDatabase<any>,
    readonly kind: DatabaseKind,
    readonly table: TableModel,
    /** The download route's pattern, for each record's `url`. */
    readonly path: string,
    /** Adds what a record shows beyond its columns (an image's variant URLs). */
    readonly decorate: (record: FileRecord) => FileRecord = (record) => record,
  ) {
    this.#columns = rowSelection(kind, table);
  }

  /** A new row's identity: the id callers see and an unrelated storage key. */
  static newIdentity(): { id: string; key: string } {
    return { id: randomUUID(), key: `files/${randomBytes(16).toString("hex")}` };
  }

  static plausibleId(id: string): boolean {
    return ID.test(id);
  }

  /** A row as the driver returned it. */
  toStored(row: Row): StoredFile {
    return this.fromDecoded(decodeRow(this.kind, this.table, row));
  }

  /** A row the query API already decoded. */
  fromDecoded(row: Row): StoredFile {
    const { key, ...rest } = row as Row & { key: string };
    const record = { ...rest, url: this.path.replace(":id", encodeURIComponent(String(rest.id))) } as FileRecord;
    return { record: this.decorate(record), key };
  }

  async insert(
    executor: AppDatabase<any>,
    values: { id: string; key: string; name: string; type: string; size: number; userId?: string | null; organizationId?: string | null; placeholder?: string | null },
  ): Promise<StoredFile> {
    const row = await executor.insertInto("file").values(values).returning(this.#columns).executeTakeFirstOrThrow();
    return this.toStored(row as Row);
  }

  /**
   * The file with this id, narrowed by `scope` in the same statement
   * (`WHERE id = ? AND userId = ? AND (organizationId IS NULL OR organizationId = ?)`): a file outside
   * it is exactly a missing one.
   */
  async find(id: string, scope: FileScope | undefined, executor: AppDatabase<any> = this.db): Promise<StoredFile | undefined> {
    if (!FileRows.plausibleId(id)) return undefined;
    let select = executor.selectFrom("file").select(this.#columns).where("id", "=", id);
    for (const [column, values] of scopeColumns(scope ?? {})) {
      select = select.where((eb) => eb.or(values.map((value) => (value === null ? eb(column, "is", null) : eb(column, "=", value)))));
    }
    const row = await select.executeTakeFirst();
    return row ? this.toStored(row as Row) : undefined;
  }

  async remove(executor: AppDatabase<any>, id: string): Promise<StoredFile | undefined> {
    const row = await executor.deleteFrom("file").where("id", "=", id).returning(this.#columns).executeTakeFirst();
    return row ? this.toStored(row as Row) : undefined;
  }

  encode(column: string, value: unknown): unknown {
    return encodeValue(this.kind, this.table.columns[column]!, value);
  }
}
