import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/** A `tools/call` that can be answered without the SDK's transport and server. */
export interface DirectCall {
  /** The client's JSON-RPC id. */
  id: string | number;
  name: string;
  args: Record<string, unknown> | undefined;
}

/** Far below the transport's body limit (4 MiB), counted in UTF-16 units of at most 3 bytes each. */
const DIRECT_MAX_LENGTH = 1024 * 1024;
const MESSAGE_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments"]);

/**
 * The common request, a plain `tools/call` in one well-formed message with the headers SDK clients
 * send, recognised so it can skip the SDK's per-request transport (header checks, stream read, zod
 * parse of the JSON-RPC envelope, a UUID) and server (two more zod parses of the request, one of the
 * result, an abort controller), which cost more than the procedure behind a small tool. Anything
 * else — another method, a notification, `_meta` or `task` in the params, any header, size or shape
 * the transport might refuse — is `undefined` and goes the SDK's way, so its rules and its errors
 * stay exactly the SDK's. What is recognised here is what the SDK would accept: the answer built
 * for it (see `directAnswer`) is byte for byte the one the SDK sends.
 */
export function directCall(request: Request, text: string, known: (name: string) => boolean): DirectCall | undefined {
  const { headers } = request;
  const accept = headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (headers.get("content-type") !== "application/json") return undefined;
  const version = headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  if (text.length > DIRECT_MAX_LENGTH || Number(headers.get("content-length")) > DIRECT_MAX_LENGTH) return undefined;
  // Only objects past this point; an array was refused before (batch.ts).
  if (!/^\s*\{/.test(text)) return undefined;
  let message: Record<string, unknown>;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (message.jsonrpc !== "2.0" || message.method !== "tools/call" || !onlyKeys(message, MESSAGE_KEYS)) return undefined;
  const { id, params } = message;
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined;
  if (!isRecord(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  const { name, arguments: args } = params;
  if (typeof name !== "string" || !known(name)) return undefined;
  // The SDK copies the arguments through zod, which would turn an own `__proto__` key into a prototype.
  if (args !== undefined && (!isRecord(args) || Object.hasOwn(args, "__proto__"))) return undefined;
  return { id: id as string | number, name, args: args as Record<string, unknown> | undefined };
}

/** A tool's outcome: its text, whether that text (an object's JSON) is also the structured content, and whether it is an error. */
export interface ToolOutcome {
  text: string;
  structured: boolean;
  isError: boolean;
}

/**
 * The JSON-RPC answer to a direct call, in the bytes the SDK's server and transport write: the
 * result's keys in the order of the SDK's result schema, the envelope's as its protocol builds it.
 * Structured content is the tool's JSON text itself, which is what re-encoding its parse would give
 * (with one difference: the SDK's copy through zod drops a top-level `__proto__` key, which this
 * keeps, as the text content does).
 */
export function directAnswer(id: string | number, outcome: ToolOutcome): Response {
  const { text, structured, isError } = outcome;
  const result = `{"content":[{"type":"text","text":${JSON.stringify(text)}}]${structured ? `,"structuredContent":${text}` : ""}${isError ? `,"isError":true` : ""}}`;
  return json(`{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`);
}

/** What the SDK's protocol answers when a request handler throws. */
export function directFailure(id: string | number, error: unknown): Response {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: string; data?: unknown };
  const body = { code: Number.isSafeInteger(code) ? code : -32603, message: message ?? "Internal error", ...(data !== undefined && { data }) };
  return json(JSON.stringify({ jsonrpc: "2.0", id, error: body }));
}

function json(body: string): Response {
  return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function onlyKeys(value: object, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}
