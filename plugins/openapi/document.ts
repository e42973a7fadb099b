import { declaredPermission, type ResourceInfo, type SealedApp } from "../../kernel/index.js";
import type { RestAction, RestOperation } from "./operations.js";
import { listQuerySchema, includeSchema, rowSchema, withExamples, type Convert } from "./schemas.js";

/** The session cookie the auth library sets (with a `__Secure-` prefix over HTTPS). */
const SESSION_COOKIE = "better-auth.session_token";

const ERROR_SCHEMA = {
  type: "object",
  properties: {
    code: { type: "string", examples: ["BAD_REQUEST"] },
    status: { type: "integer", examples: [400] },
    message: { type: "string" },
    data: {},
  },
  required: ["code", "status", "message"],
};

/** Pieces of the document: plain JSON (the OpenAPI typings split 3.0 and 3.1 schema types). */
type Json = Record<string, any>;

const ERROR_TEXT: Record<number, string> = {
  400: "Invalid input (the message names the field)",
  401: "Sign in first",
  403: "The caller's role or the permission refuses it",
  404: "No such row, or a row the caller does not own",
  409: "Conflicts with a unique or foreign key",
  413: "The request body is too large",
  415: "The body or the file has a media type that is not accepted",
  429: "Rate limited (see Retry-After)",
  500: "Unexpected failure",
};

/**
 * The OpenAPI 3.1 document of the REST surface, built once when the app is sealed: `info.title` is
 * the app's name, `info.version` the latest schema version, `servers[0].url` `<baseUrl>/rest`.
 * Inputs come from the procedures' own zod schemas (the ones the gate validates with), rows from the
 * table model, errors are the one body every plain surface sends.
 */
export function openapiDocument(sealed: SealedApp, operations: readonly RestOperation[], convert: Convert, authDocs: { paths: Json; schemas: Json } = { paths: {}, schemas: {} }): Json {
  const registry = sealed.service("resource-registry");
  const auth = sealed.schema.auth;
  const securitySchemes: Record<string, Json> = {};
  if (auth) securitySchemes.session = { type: "apiKey", in: "cookie", name: SESSION_COOKIE, description: "The session cookie set by `/api/auth/sign-in/*`" };
  if (auth?.apiKeys) securitySchemes.apiKey = { type: "apiKey", in: "header", name: "x-api-key", description: "An API key; `Authorization: Bearer <key>` works too" };
  const schemas: Record<string, Json> = { Error: ERROR_SCHEMA };
  const paths: Json = {};

  for (const operation of operations) {
    const procedure = sealed.procedures.get(operation.name)!["~orpc"];
    const resource = operation.resource && registry?.get(operation.resource.name);
    const item: Json = {
      // The list answers on GET and, with its arguments as a body, on POST: one id each.
      operationId: operation.resource?.action === "list" && operation.method === "POST" ? `${operation.name}.body` : operation.name,
      tags: [operation.name.includes(".") ? operation.name.slice(0, operation.name.lastIndexOf(".")) : operation.name],
      summary: procedure.route.summary ?? (resource ? `${operation.resource!.action} ${resource.name}` : operation.name),
      ...(procedure.route.description && { description: procedure.route.description }),
      responses: {},
    };
    const parameters: Json[] = operation.params.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
    let output: Json;
    if (resource && operation.resource) {
      const table = sealed.schema.tables[operation.resource.table]!;
      const rowName = schemaName(resource.name);
      schemas[rowName] ??= rowSchema(table) as Json;
      const row = { $ref: `#/components/schemas/${rowName}` };
      output = outputOf(operation.resource.action, row);
      if (parameters[0]) parameters[0].schema = convertColumnKey(convert, procedure.inputSchema);
      if (operation.method === "POST" && operation.resource.action !== "create") {
        item.requestBody = jsonBody(convert(procedure.inputSchema, "input"), operation.resource.action === "batch");
      } else if (operation.resource.action === "list") {
        for (const [name, schema] of Object.entries(listQuerySchema(table, resource.includable, convert, sealed.schema).properties)) {
          parameters.push({ name, in: "query", required: false, ...(typeof schema === "object" && schema.type === "integer" ? {} : { style: "deepObject", explode: true }), schema });
        }
      }
      if (operation.resource.action === "get" && resource.includable.length > 0) {
        parameters.push({ name: "include", in: "query", required: false, style: "deepObject", explode: true, schema: includeSchema(resource.includable) });
      }
      if (operation.resource.action === "create") item.requestBody = jsonBody(withExamples(structuredClone(convert(procedure.inputSchema, "input")), table), true);
      if (operation.resource.action === "update") item.requestBody = jsonBody(withExamples(structuredClone(convert(shapeOf(procedure.inputSchema)?.data, "input")), table), true);
    } else {
      // Without `.output()` the answer is any JSON value: said so, rather than an empty schema.
      output = procedure.outputSchema ? (convert(procedure.outputSchema, "output") as Json) : { description: "Any JSON value (the procedure declares no output schema)" };
      const input = convert(procedure.inputSchema, "input") as Json;
      const fields: Record<string, Json> = input.properties ?? {};
      // Path parameters are fields of the input; on GET and DELETE the other fields are the query.
      for (const parameter of parameters) if (fields[parameter.name]) parameter.schema = fields[parameter.name];
      if (operation.method === "GET" || operation.method === "DELETE") {
        for (const [name, schema] of Object.entries(fields)) {
          if (operation.params.includes(name)) continue;
          const deep = schema.type === "object" || schema.type === "array";
          parameters.push({ name, in: "query", required: input.required?.includes(name) ?? false, ...(deep && { style: "deepObject", explode: true }), schema });
        }
      } else if (operation.multipart) {
        item.requestBody = multipartBody(input);
      } else if (procedure.inputSchema) {
        item.requestBody = jsonBody(input, !isOptional(procedure.inputSchema));
      }
    }
    if (parameters.length > 0) item.parameters = parameters;
    item.responses["200"] = { description: "OK", content: { "application/json": { schema: output } } };
    const access = accessOf(sealed.procedures.get(operation.name)!);
    for (const status of errorStatuses(operation, resource, access)) {
      item.responses[String(status)] = { description: ERROR_TEXT[status]!, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    }
    const schemes = Object.keys(securitySchemes).map((name) => ({ [name]: [] }));
    if (schemes.length > 0) item.security = securityOf(access, schemes);
    ((paths[operation.path] ??= {}) as Record<string, unknown>)[operation.method.toLowerCase()] = item;
  }

  return {
    openapi: "3.1.1",
    info: { title: sealed.name, version: sealed.schema.version || "0" },
    servers: [{ url: `${sealed.baseUrl?.replace(/\/$/, "") ?? ""}/rest` }],
    paths: { ...paths, ...authDocs.paths },
    components: { schemas: { ...schemas, ...authDocs.schemas }, ...(Object.keys(securitySchemes).length > 0 && { securitySchemes }) },
  };
}

/** The permission an operation answers to, as every surface reports it (`declaredPermission`). */
type Access = "public" | "authenticated" | "owner" | "where" | "admin" | "function";

function accessOf(procedure: Parameters<typeof declaredPermission>[0]): Access {
  return declaredPermission(procedure).split(" ")[0] as Access;
}

/**
 * Public operations need no credential (`{}`); every other permission needs one of the schemes,
 * even a function permission (it sees the caller's session).
 */
function securityOf(access: Access, schemes: Json[]): Json[] {
  return access === "public" ? [{}] : schemes;
}

function errorStatuses(operation: RestOperation, resource: ResourceInfo | undefined, access: Access): number[] {
  if (operation.multipart) return [400, 401, 403, 404, 413, 415, 500];
  if (!resource || !operation.resource) {
    if (access === "public") return [400, 500];
    if (access === "authenticated") return [400, 401, 500];
    return [400, 401, 403, 500];
  }
  const { action } = operation.resource;
  const rules = action === "batch" ? BATCHED.map((write) => resource.permissions[write]) : [ruleOf(resource, action)];
  const statuses = [400];
  if (rules.some((rule) => rule !== "public" && rule !== "function")) statuses.push(401);
  if (rules.some((rule) => rule === "admin" || rule === "function")) statuses.push(403);
  if (action === "get" || action === "update" || action === "delete" || action === "batch") statuses.push(404);
  if (action === "create" || action === "update" || action === "delete" || action === "batch") statuses.push(409);
  if (action === "batch") statuses.push(429);
  statuses.push(500);
  return statuses;
}

const BATCHED = ["create", "update", "delete"] as const;

/** The rule a single resource operation answers to: `page` the list's. */
function ruleOf(resource: ResourceInfo, action: Exclude<RestAction, "batch">): string {
  return resource.permissions[action === "page" ? "list" : action];
}

/** The answer of a resource operation, in terms of its row schema. */
function outputOf(action: RestAction, row: Json): Json {
  if (action === "list") return { type: "array", items: row };
  if (action === "page") return { type: "object", properties: { items: { type: "array", items: row }, nextCursor: { type: ["string", "null"] } }, required: ["items", "nextCursor"] };
  if (action === "batch") {
    const rows = { type: "array", items: row };
    return { type: "object", properties: { create: rows, update: rows, delete: rows }, required: ["create", "update", "delete"] };
  }
  return row;
}

/** A `multipart/form-data` body: file fields as binary strings, object fields sent as JSON text. */
function multipartBody(input: Json): Json {
  const properties: Record<string, Json> = {};
  const encoding: Record<string, Json> = {};
  for (const [name, schema] of Object.entries((input.properties ?? {}) as Record<string, Json>)) {
    properties[name] = schema.contentMediaType ? { type: "string", format: "binary" } : schema;
    if (schema.type === "object") encoding[name] = { contentType: "application/json" };
  }
  return { required: true, content: { "multipart/form-data": { schema: { ...input, properties }, ...(Object.keys(encoding).length > 0 && { encoding }) } } };
}

function jsonBody(schema: unknown, required: boolean): Json {
  return { required, content: { "application/json": { schema: schema } } };
}

/** The key column's schema, read from the procedure's own `{ where: { <pk> } }` input. */
function convertColumnKey(convert: Convert, input: unknown): Json {
  const where = shapeOf(input)?.where;
  const key = Object.values(shapeOf(where) ?? {})[0];
  return (key ? convert(key, "input") : { type: "string" }) as Json;
}

/** The fields of a zod object (unwrapping `.optional()`), without importing zod at runtime. */
function shapeOf(schema: unknown): Record<string, unknown> | undefined {
  const def = (schema as { def?: { type?: string; shape?: Record<string, unknown>; innerType?: unknown } } | undefined)?.def;
  if (def?.type === "optional") return shapeOf(def.innerType);
  return def?.shape;
}

function isOptional(schema: unknown): boolean {
  const standard = schema as { "~standard"?: unknown; def?: { type?: string } };
  return standard.def?.type === "optional";
}

function schemaName(resource: string): string {
  return resource.replace(/(^|[._-])(\w)/g, (_, __, char: string) => char.toUpperCase());
}
