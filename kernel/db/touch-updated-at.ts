import {
  AliasNode,
  ColumnNode,
  ColumnUpdateNode,
  TableNode,
  UpdateQueryNode,
  ValueNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from "kysely";
import type { ColumnModel, SchemaModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { encodeValue } from "./values.js";

/** The column `timestamps(t)` declares: touched on every update that leaves it out. */
const UPDATED_AT = "updatedAt";
const CURRENT_TIMESTAMP = /^\s*\(?\s*current_timestamp\s*\)?\s*$/i;

export function touchesUpdatedAt(column: ColumnModel | undefined): boolean {
  return column?.type === "timestamp" && column.default?.kind === "sql" && CURRENT_TIMESTAMP.test(column.default.sql);
}

/**
 * Sets `updatedAt` to now on every `UPDATE` of a table whose `updatedAt` is what `timestamps(t)`
 * declares (a timestamp defaulting to `CURRENT_TIMESTAMP`), unless the update sets it itself. A
 * Kysely plugin on the app's instance, so resources, the admin API, transactions and the app's
 * own `db.updateTable(...)` all get it from one place; raw `sql` statements are left as written.
 * The time is the process clock, encoded as the column stores it (ISO text with milliseconds on
 * SQLite, so text order stays time order).
 */
export function touchUpdatedAt(model: SchemaModel, kind: DatabaseKind): KyselyPlugin {
  const tables = new Set(Object.values(model.tables).filter((table) => touchesUpdatedAt(table.columns[UPDATED_AT])).map((table) => table.name));
  return {
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if (tables.size === 0 || !UpdateQueryNode.is(node) || !node.updates) return node;
      const table = tableName(node.table);
      if (table === undefined || !tables.has(table)) return node;
      if (node.updates.some((update) => columnName(update.column) === UPDATED_AT)) return node;
      const now = ValueNode.create(encodeValue(kind, model.tables[table]!.columns[UPDATED_AT]!, new Date()));
      return { ...node, updates: [...node.updates, ColumnUpdateNode.create(ColumnNode.create(UPDATED_AT), now)] };
    },
    async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return result;
    },
  };
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (node && AliasNode.is(node)) return tableName(node.node);
  // A schema-qualified name is another schema's table, not one of the app's.
  return node && TableNode.is(node) && !node.table.schema ? node.table.identifier.name : undefined;
}

function columnName(node: OperationNode): string | undefined {
  return ColumnNode.is(node) ? node.column.name : undefined;
}
