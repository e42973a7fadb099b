import { sql, type RawBuilder } from "kysely";
import { quoteIdent } from "./ddl-column.js";
import type { SchemaModel, TableModel, VectorDistance } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { TrellisError } from "../errors.js";

/**
 * pgvector in SQL: the column type, the HNSW index, the extension a migration creates, and the
 * distance operators `nearest` orders by. Vectors live on the PostgreSQL family only (the embedded
 * database loads pgvector; a PostgreSQL server needs it installed); SQLite has no vector type, so a
 * schema with one is refused when the app is built.
 */

export const VECTOR_ERRORS = {
  /** A vector column on SQLite. */
  UNSUPPORTED: "DB_VECTOR_UNSUPPORTED",
  /** The PostgreSQL server has no pgvector to create the extension from. */
  EXTENSION_MISSING: "DB_VECTOR_EXTENSION_MISSING",
} as const;

/** The first statement of a migration step that adds a vector column. */
export const CREATE_VECTOR_EXTENSION = "create extension if not exists vector";

const OPERATORS: Record<VectorDistance, string> = { cosine: "<=>", l2: "<->", inner: "<#>" };
const OPCLASSES: Record<VectorDistance, string> = { cosine: "vector_cosine_ops", l2: "vector_l2_ops", inner: "vector_ip_ops" };

/** `create index ... using hnsw`: the operator class is the column's distance, so `nearest` can use it. */
export function hnswIndexStatement(name: string, table: string, column: string, distance: VectorDistance): string {
  return `create index ${quoteIdent(name)} on ${quoteIdent(table)} using hnsw (${quoteIdent(column)} ${OPCLASSES[distance]})`;
}

/** `"q"."col" <=> $vector`: the distance of each row, smaller is nearer for every operator. */
export function distanceExpression(qualifier: string, column: string, distance: VectorDistance, vector: string): RawBuilder<number> {
  return sql<number>`${sql.id(qualifier, column)} ${sql.raw(OPERATORS[distance])} ${vector}::vector`;
}

export function hasVectorColumn(tables: readonly TableModel[]): boolean {
  return tables.some((table) => Object.values(table.columns).some((column) => column.type === "vector"));
}

/** Refuses vector columns on SQLite, naming each, when the app's database is opened (at build). */
export function checkVectorSupport(kind: DatabaseKind, schemas: readonly SchemaModel[]): void {
  if (kind !== "sqlite") return;
  const columns = new Set<string>();
  for (const model of schemas) {
    for (const table of Object.values(model.tables)) {
      for (const [name, column] of Object.entries(table.columns)) if (column.type === "vector") columns.add(`${table.name}.${name}`);
    }
  }
  if (columns.size === 0) return;
  throw new TrellisError(
    VECTOR_ERRORS.UNSUPPORTED,
    `SQLite has no vector type, but ${[...columns].join(", ")} ${columns.size === 1 ? "is a vector column" : "are vector columns"}: ` +
      "use the embedded database (embedded(), pgvector included) or PostgreSQL with the pgvector extension",
    { plugin: "kernel", hook: "database" },
  );
}

/** The migration error when `create extension vector` fails because the server lacks pgvector. */
export function vectorExtensionMissing(migration: string, cause: unknown): TrellisError | undefined {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  // 58P01: the extension's control file is missing; 0A000: "extension is not available" (PG 16+).
  if (code !== "58P01" && code !== "0A000" && !/extension "vector"|vector\.control/.test(message)) return undefined;
  return new TrellisError(
    VECTOR_ERRORS.EXTENSION_MISSING,
    `Migration ${migration} adds a vector column, but this PostgreSQL server has no pgvector extension (${message}). ` +
      "Install pgvector on the server (https://github.com/pgvector/pgvector#installation, or your host's extension list), then start again; " +
      "the whole run was rolled back.",
    { plugin: "kernel", hook: "migrate", cause },
  );
}
