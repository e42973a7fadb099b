import {
  RpcError,
  columnInput,
  encodeValue,
  primaryKeyOf,
  type AppDatabase,
  type AppRpcContext,
  type ColumnModel,
  type DatabaseKind,
  type ResourceRegistry,
  type SchemaModel,
} from "../../kernel/index.js";

/** One `x_file` pivot row as callers see it. */
export interface Attachment {
  fileId: string;
  table: string;
  entityId: string | number;
  role: string | null;
  position: number;
}

interface Target {
  pivot: string;
  key: string;
  keyColumn: ColumnModel;
}

/**
 * The attach pivots `.files({ attachTo })` declared. Attaching to a row needs the right to change
 * it: the update permission of the table's resource when it has one (401, 403 or 404 exactly as
 * `<table>.update` answers), else only that the row exists.
 */
export class Attachments {
  readonly #targets = new Map<string, Target>();

  constructor(
    readonly db: AppDatabase<any>,
    readonly kind: DatabaseKind,
    schema: SchemaModel,
    readonly registry: () => ResourceRegistry | undefined,
  ) {
    for (const table of schema.files?.attachTo ?? []) {
      const model = schema.tables[table];
      const key = model && primaryKeyOf(model);
      if (key) this.#targets.set(table, { pivot: `${table}_file`, key, keyColumn: model.columns[key]! });
    }
  }

  get tables(): string[] {
    return [...this.#targets.keys()];
  }

  /** The target's entity id, checked against its key column (400 for an unknown table or a bad id). */
  entity(table: string, entityId: unknown): { target: Target; id: string | number } {
    const target = this.#targets.get(table);
    if (!target) {
      throw new RpcError("BAD_REQUEST", { message: `Files cannot attach to "${table}"; attachable: ${this.tables.join(", ") || "none"}`, data: { path: "table" } });
    }
    const parsed = columnInput(target.keyColumn).safeParse(entityId);
    if (!parsed.success) throw new RpcError("BAD_REQUEST", { message: `entityId is not a valid ${table}.${target.key}`, data: { path: "entityId" } });
    return { target, id: parsed.data as string | number };
  }

  /** Throws what the table's resource would for `action` on the row, or 404 when the row is missing. */
  async authorize(action: "get" | "update", table: string, id: string | number, context: AppRpcContext): Promise<void> {
    const resource = this.registry()?.get(table);
    if (resource) return resource.authorize(action, context, id);
    const { key, keyColumn } = this.#targets.get(table)!;
    const found = await this.db.selectFrom(table).select(key).where(key, "=", encodeValue(this.kind, keyColumn, id)).executeTakeFirst();
    if (!found) throw new RpcError("NOT_FOUND", { message: `No ${table} matches` });
  }

  /** Attaches, or updates role and position when the file is already attached to that row. */
  async attach(executor: AppDatabase<any>, fileId: string, table: string, id: string | number, role: string | null, position: number): Promise<Attachment> {
    const { pivot, keyColumn } = this.#targets.get(table)!;
    const entityId = encodeValue(this.kind, keyColumn, id);
    const updated = await executor.updateTable(pivot).set({ role, position }).where("fileId", "=", fileId).where("entityId", "=", entityId).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) await executor.insertInto(pivot).values({ fileId, entityId, role, position }).execute();
    return { fileId, table, entityId: id, role, position };
  }

  async detach(executor: AppDatabase<any>, fileId: string, table: string, id: string | number): Promise<number> {
    const { pivot, keyColumn } = this.#targets.get(table)!;
    const result = await executor.deleteFrom(pivot).where("fileId", "=", fileId).where("entityId", "=", encodeValue(this.kind, keyColumn, id)).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Removes every attachment of a file (before its row goes, so no pivot row points nowhere). */
  async detachAll(executor: AppDatabase<any>, fileId: string): Promise<void> {
    for (const { pivot } of this.#targets.values()) await executor.deleteFrom(pivot).where("fileId", "=", fileId).execute();
  }

  /** The attachments of a row, by position (then attach order). */
  async of(table: string, id: string | number): Promise<{ fileId: string; role: string | null; position: number }[]> {
    const { pivot, keyColumn } = this.#targets.get(table)!;
    const rows = await this.db
      .selectFrom(pivot)
      .select(["fileId", "role", "position"])
      .where("entityId", "=", encodeValue(this.kind, keyColumn, id))
      .orderBy("position")
      .orderBy("id")
      .execute();
    return rows.map((row) => {
      const { fileId, role, position } = row as { fileId: unknown; role: unknown; position: unknown };
      return { fileId: String(fileId), role: role === null ? null : String(role), position: Number(position) };
    });
  }
}
