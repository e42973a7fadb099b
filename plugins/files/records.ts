import { randomBytes, randomUUID } from "node:crypto";
import { decodeRow, encodeValue, rowSelection, type AppDatabase, type DatabaseKind, type TableModel } from "../../kernel/index.js";
import type { FileRecord } from "./options.js";

type Row = Record<string, unknown>;

/** A stored file's row: its public record and the storage key that never leaves the server. */
export interface StoredFile {
  record: FileRecord;
  key: string;
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

  async insert(executor: AppDatabase<any>, values: { id: string; key: string; name: string; type: string; size: number; userId?: string | null; placeholder?: string | null }): Promise<StoredFile> {
    const row = await executor.insertInto("file").values(values).returning(this.#columns).executeTakeFirstOrThrow();
    return this.toStored(row as Row);
  }

  /** The file with this id, scoped to `owner` when given: one `WHERE id = ? AND userId = ?`. */
  async find(id: string, owner: string | undefined, executor: AppDatabase<any> = this.db): Promise<StoredFile | undefined> {
    if (!FileRows.plausibleId(id)) return undefined;
    let select = executor.selectFrom("file").select(this.#columns).where("id", "=", id);
    if (owner !== undefined) select = select.where("userId", "=", owner);
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
