import type { JSONSchema } from "@orpc/openapi";
import { MAX_SEARCH_CHARS, columnInput, type ColumnModel, type SchemaModel, type TableModel } from "../../kernel/index.js";

/**
 * JSON Schemas of a resource's REST shapes. The column schemas are the kernel's zod inputs converted
 * once (`convert`), so the document, the query-string coercion and validation agree; only rows (the
 * outputs, which have no zod schema) are described here from the column types.
 */
export type Convert = (schema: unknown, strategy: "input" | "output") => JSONSchema;

/** A row as plain JSON returns it (DESIGN.md section 5: values on the wire). */
export function rowSchema(table: TableModel): JSONSchema {
  const properties: Record<string, JSONSchema> = {};
  for (const [name, column] of Object.entries(table.columns)) properties[name] = outputColumn(column, name);
  return { type: "object", properties, required: Object.keys(properties) };
}

function outputColumn(column: ColumnModel, name: string): JSONSchema {
  const schema = { ...outputValue(column), examples: [exampleOf(column, name)] };
  if (!column.nullable) return schema;
  return typeof schema.type === "string" ? { ...(schema as object), type: [schema.type, "null"] } : { anyOf: [schema, { type: "null" }] };
}

function outputValue(column: ColumnModel): Exclude<JSONSchema, boolean> {
  if (column.enum) return column.enum.multiple ? { type: "string", description: `comma-separated set of ${column.enum.values.join(", ")}` } : { type: "string", enum: [...column.enum.values] };
  switch (column.type) {
    case "serial":
    case "integer":
      return { type: "integer" };
    case "real":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    case "timestamp":
      return { type: "string", format: "date-time" };
    case "date":
      return { type: "string", format: "date" };
    case "uuid":
      return { type: "string", format: "uuid" };
    case "bigint":
      return { type: "string", pattern: "^-?\\d+$" };
    case "decimal":
      return { type: "string", pattern: "^-?(\\d+(\\.\\d*)?|\\.\\d+)$" };
    case "bytes":
      return { type: "string", contentEncoding: "base64" };
    case "jsonb":
      return {};
    case "vector":
      return { type: "array", items: { type: "number" }, minItems: column.vector!.dimensions, maxItems: column.vector!.dimensions };
    default:
      return { type: "string" };
  }
}

const TEXT_TYPES = new Set(["text", "varchar", "uuid"]);

/**
 * A value of the column a reader could send as it is, so the reference page shows `"A title"` and
 * `"2026-01-02T03:04:05.000Z"` rather than `"string"`.
 */
export function exampleOf(column: ColumnModel, name: string): unknown {
  if (column.enum) return column.enum.values[0];
  switch (column.type) {
    case "serial":
    case "integer":
      return 1;
    case "real":
      return 1.5;
    case "boolean":
      return true;
    case "timestamp":
      return "2026-01-02T03:04:05.000Z";
    case "date":
      return "2026-01-02";
    case "uuid":
      return "6f1c1a2e-1111-4222-8333-444455556666";
    case "bigint":
      return "9007199254740993";
    case "decimal":
      return "10.50";
    case "bytes":
      return "aGVsbG8=";
    case "jsonb":
      return { key: "value" };
    case "vector":
      return Array.from({ length: column.vector!.dimensions }, () => 0.5);
    default:
      return `A ${name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()}`;
  }
}

/** Adds each column's example to a converted body schema's properties (in place, where absent). */
export function withExamples(schema: JSONSchema, table: TableModel): JSONSchema {
  const properties = typeof schema === "object" ? (schema.properties as Record<string, Exclude<JSONSchema, boolean>> | undefined) : undefined;
  for (const [name, property] of Object.entries(properties ?? {})) {
    const column = table.columns[name];
    if (column && typeof property === "object" && property.examples === undefined) property.examples = [exampleOf(column, name)];
  }
  return schema;
}

/**
 * A list's `where` as a JSON Schema: per column a value or an operator object, plus `AND`/`OR`
 * arrays and `NOT`, one level deep, and with `model` each relation's filter over the related table's
 * columns (deeper nesting is accepted as is and checked by the procedure).
 */
export function whereSchema(table: TableModel, convert: Convert, model?: SchemaModel): JSONSchema {
  const columns: Record<string, JSONSchema> = {};
  for (const [name, column] of Object.entries(table.columns)) {
    const value = convert(columnInput(column), "input");
    const operators: Record<string, JSONSchema> = {
      equals: value,
      not: value,
      in: { type: "array", items: value },
      notIn: { type: "array", items: value },
      isNull: { type: "boolean" },
    };
    if (!TEXT_TYPES.has(column.type) && column.type !== "boolean" && column.type !== "jsonb" && column.type !== "vector") {
      for (const op of ["lt", "lte", "gt", "gte"]) operators[op] = value;
    }
    if (TEXT_TYPES.has(column.type)) for (const op of ["contains", "startsWith", "endsWith"]) operators[op] = { type: "string" };
    columns[name] = { anyOf: [value, { type: "null" }, { type: "object", properties: operators, additionalProperties: false }] };
  }
  const level: JSONSchema = { type: "object", properties: columns };
  // Relation filters, one level: the related table's columns (deeper nesting is checked by the procedure).
  const relations: Record<string, JSONSchema> = {};
  for (const [name, relation] of Object.entries(model?.relations[table.name] ?? {})) {
    const target = model!.tables[relation.target];
    if (!target || Object.hasOwn(table.columns, name)) continue;
    const nested = whereSchema(target, convert);
    const many = relation.kind === "hasMany" || relation.kind === "manyToMany";
    const operators: Record<string, JSONSchema> = many ? { some: nested, every: nested, none: nested } : { is: { anyOf: [nested, { type: "null" }] }, isNot: { anyOf: [nested, { type: "null" }] } };
    relations[name] = { type: "object", properties: operators, additionalProperties: false };
  }
  return {
    type: "object",
    properties: { ...columns, ...relations, AND: { type: "array", items: level }, OR: { type: "array", items: level }, NOT: level },
  };
}

/** The query string of `GET /rest/<resource>`, as an object (bracket notation decodes into it). */
export function listQuerySchema(table: TableModel, includable: readonly string[], convert: Convert, model?: SchemaModel): JSONSchema & { properties: Record<string, JSONSchema> } {
  const columns = Object.keys(table.columns);
  const vectors = columns.filter((name) => table.columns[name]!.type === "vector");
  return {
    type: "object",
    properties: {
      where: whereSchema(table, convert, model),
      orderBy: { type: "array", items: { type: "object", propertyNames: { enum: columns }, additionalProperties: { enum: ["asc", "desc"] } } },
      take: { type: "integer", minimum: 0 },
      skip: { type: "integer", minimum: 0 },
      after: { type: "string", description: "The nextCursor of a previous page ({name}.page): only rows after it" },
      ...(table.search && {
        search: {
          type: "string",
          maxLength: MAX_SEARCH_CHARS,
          description: `Words to find in ${Object.keys(table.search.columns).join(", ")}: rows holding every word, best match first unless orderBy is given`,
        },
      }),
      ...(includable.length > 0 && { include: includeSchema(includable) }),
      ...(vectors.length > 0 && {
        nearest: {
          type: "object",
          description: "The k rows whose vector column is nearest vector, nearest first, each with _distance (long vectors: POST the arguments to /{name}/list)",
          properties: { column: { enum: vectors }, vector: { type: "array", items: { type: "number" } }, k: { type: "integer", minimum: 1 } },
          required: ["column", "vector", "k"],
        },
      }),
    },
  };
}

export function includeSchema(includable: readonly string[]): JSONSchema {
  return { type: "object", properties: Object.fromEntries(includable.map((name) => [name, { type: "boolean", const: true }])), additionalProperties: false };
}
