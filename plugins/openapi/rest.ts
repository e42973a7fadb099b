import { JsonSchemaCoercer } from "@orpc/json-schema";
import type { JSONSchema } from "@orpc/openapi";
import { StandardBracketNotationSerializer } from "@orpc/openapi-client/standard";
import { ZodToJsonSchemaConverter } from "@orpc/zod/zod4";
import { RpcError, columnInput, errorResponse, rowDays, toPlainJson, type AppRpcContext, type RequestEvent, type SealedApp, type TableModel } from "../../kernel/index.js";
import { listQuerySchema, type Convert } from "./schemas.js";
import type { RestOperation } from "./operations.js";

/**
 * The `/rest/**` runtime, loaded with the optional peers once the app is sealed. It only turns a
 * plain-JSON request into the procedure's input and the output back into plain JSON: the procedure
 * runs through the kernel's gate (`sealed.call`), which owns permissions, validation and error
 * mapping, so REST answers exactly what `/rpc` answers.
 */
export interface RestRuntime {
  handle(operation: RestOperation, event: RequestEvent, context: AppRpcContext): Promise<Response>;
  /** The JSON Schema converter, shared with the document. */
  convert: Convert;
}

type Decode = (event: RequestEvent) => Promise<unknown>;

/**
 * `include[name]=true` read as a boolean whatever the name, so the procedure, not the coercer,
 * judges it: a relation that is not includable gets the message `/rpc` gives, naming the includable ones.
 */
const ANY_INCLUDE = { type: "object", additionalProperties: { type: "boolean" } } satisfies JSONSchema;

export function restRuntime(sealed: SealedApp, operations: readonly RestOperation[]): RestRuntime {
  const converter = new ZodToJsonSchemaConverter();
  // No schema (a procedure without `.input()` or `.output()`) is any value: `{}`.
  const convert: Convert = (schema, strategy) => (schema === undefined ? {} : converter.convert(schema as never, { strategy })[1]);
  const coercer = new JsonSchemaCoercer();
  // The coercer, like the decoder, builds null-prototype objects.
  const coerce = (schema: JSONSchema, value: unknown) => plain(coercer.coerce(schema as never, value));
  const brackets = new StandardBracketNotationSerializer();
  const registry = sealed.service("resource-registry");

  const query = (event: RequestEvent): Record<string, unknown> | undefined => {
    const search = event.request.url.indexOf("?");
    if (search === -1 || search === event.request.url.length - 1) return undefined;
    const entries = [...new URLSearchParams(event.request.url.slice(search + 1)).entries()];
    const decoded = brackets.deserialize(entries);
    if (Array.isArray(decoded)) throw new RpcError("BAD_REQUEST", { message: "The query string must name its parameters" });
    return decoded;
  };
  const keyOf = (table: TableModel, key: string) => {
    const schema = convert(columnInput(table.columns[key]!), "input");
    return (event: RequestEvent) => coerce(schema, event.params.key);
  };

  const decoders = new Map<RestOperation, Decode>();
  for (const operation of operations) decoders.set(operation, decoder(operation));
  function decoder(operation: RestOperation): Decode {
    const { resource } = operation;
    if (!resource) {
      // Path parameters and query strings are text: coerced by the procedure's own input schema.
      const schema = convert(sealed.procedures.get(operation.name)!["~orpc"].inputSchema, "input");
      return operation.method === "GET" || operation.method === "DELETE"
        ? async (event) => coerce(schema, withParams(query(event), event.params, operation.params))
        : operation.params.length > 0
          ? async (event) => coerce(schema, withParams(await body(event), event.params, operation.params))
          : body;
    }
    const table = sealed.schema.tables[resource.table]!;
    const includable = registry?.get(resource.name)?.includable ?? [];
    // POST list, page and batch: the procedure's input as the JSON body.
    if (operation.method === "POST" && resource.action !== "create") return body;
    switch (resource.action) {
      case "page":
      case "batch":
        return body;
      case "list": {
        const documented = listQuerySchema(table, includable, convert, sealed.schema);
        const schema = { ...(documented as object), properties: { ...documented.properties, include: ANY_INCLUDE } } as JSONSchema;
        return async (event) => {
          const args = query(event);
          return args && coerce(schema, args);
        };
      }
      case "create":
        return body;
      case "get": {
        const key = keyOf(table, resource.key);
        const include = { type: "object", properties: { include: ANY_INCLUDE } } satisfies JSONSchema;
        return async (event) => ({ ...(coerce(include, query(event) ?? {}) as object), where: { [resource.key]: key(event) } });
      }
      case "update": {
        const key = keyOf(table, resource.key);
        return async (event) => ({ where: { [resource.key]: key(event) }, data: (await body(event)) ?? {} });
      }
      case "delete": {
        const key = keyOf(table, resource.key);
        return async (event) => ({ where: { [resource.key]: key(event) } });
      }
    }
  }

  return {
    convert,
    async handle(operation, event, context) {
      try {
        const input = await decoders.get(operation)!(event);
        const output = await sealed.call(operation.name, input, { event, context, source: "rest" });
        if (isAsyncIterator(output)) {
          // A stream the operation list could not foresee (a plain function returning an iterator):
          // end it, and send the caller where streams are served.
          await output.return?.();
          throw new RpcError("NOT_ACCEPTABLE", { status: 406, message: `${operation.name} answers with a stream of events: call it on /rpc/${operation.name.split(".").join("/")}` });
        }
        const table = operation.resource?.table;
        return new Response(toPlainJson(output, table ? rowDays(sealed.schema, table, output) : undefined), { headers: { "content-type": "application/json" } });
      } catch (error) {
        return errorResponse(sealed.toError(error, "rest"), false);
      }
    },
  };
}

/** A JSON body; no body, an empty one or `{}`-less silence all mean "no input". */
async function body(event: RequestEvent): Promise<unknown> {
  const text = await event.request.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new RpcError("BAD_REQUEST", { message: "The request body is not valid JSON" });
  }
}

/**
 * The decoder builds null-prototype objects (safe from `__proto__` keys); procedures expect plain
 * ones. `Object.fromEntries` defines every key as an own property, `__proto__` included, so the
 * procedure's own checks still see (and refuse) it.
 */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, plain(child)]));
}

function withParams(input: unknown, params: Record<string, string>, names: readonly string[]): unknown {
  if (names.length === 0) return input;
  const values = Object.fromEntries(names.map((name) => [name, params[name]]));
  return typeof input === "object" && input !== null && !Array.isArray(input) ? { ...input, ...values } : values;
}

function isAsyncIterator(value: unknown): value is AsyncIterator<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}
