import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type GetPromptResult,
  type Prompt,
  type Resource,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { ZodToJsonSchemaConverter } from "@orpc/zod/zod4";
import { declaredPermission, errorBody, rowDays, toPlainJson, type AppRpcContext, type RequestEvent, type SealedApp } from "../../kernel/index.js";
import type { McpEntry } from "./catalog.js";
import { directAnswer, directCall, directFailure, type ToolOutcome } from "./direct.js";
import type { McpConfig } from "./index.js";
import { RequestRouter } from "./requests.js";

/**
 * The MCP runtime, loaded with the SDK once the app is sealed. Listings (names, JSON Schemas) are
 * built once, and so is the server with its handlers; each HTTP request gets only the SDK's stateless
 * transport, whose requests reach the server through one router (requests.ts), except a plain
 * `tools/call`, answered directly in the same bytes (direct.ts). Every call runs the procedure
 * through the kernel's gate (`sealed.call`), so the session, permissions, validation and error
 * statuses are exactly those of `/rpc`.
 */
export interface McpRuntime {
  /** Answers one HTTP request whose body (`text`, undefined without one) was read already. */
  handle(event: RequestEvent, context: AppRpcContext, text: string | undefined): Promise<Response>;
  close(): Promise<void>;
}

type ToolEntry = { entry: McpEntry; tool: Tool; wrapped: boolean };

/** The `_meta` key of each listed tool, resource and prompt that says who may call it (`public`, `authenticated`, ...). */
export const ACCESS_META = "trellis/access";

export function mcpRuntime(sealed: SealedApp, entries: readonly McpEntry[], config: McpConfig): McpRuntime {
  const converter = new ZodToJsonSchemaConverter();
  const inputOf = (procedure: string) => {
    const schema = sealed.procedures.get(procedure)!["~orpc"].inputSchema;
    return schema ? converter.convert(schema, { strategy: "input" })[1] : {};
  };
  /** Plain JSON of a procedure's answer; a resource action's rows with their `date` columns as days (as on REST). */
  const plain = (procedure: string, output: unknown) => {
    const table = (sealed.procedures.get(procedure)?.["~orpc"].meta as { resource?: { table?: string } } | undefined)?.resource?.table;
    return toPlainJson(output, table ? rowDays(sealed.schema, table, output) : undefined);
  };
  const tools = new Map<string, ToolEntry>();
  const resources = new Map<string, { entry: McpEntry; resource: Resource }>();
  const prompts = new Map<string, { entry: McpEntry; prompt: Prompt }>();
  for (const entry of entries) {
    const { tag } = entry;
    // Who may call it, in the words `trellis routes` and the OpenAPI document use: one source.
    const _meta = { [ACCESS_META]: declaredPermission(sealed.procedures.get(entry.procedure)!) };
    if (tag.kind === "tool") {
      const input = inputOf(entry.procedure);
      // MCP wants an object schema; any other input travels as the `input` argument.
      const isObject = typeof input === "object" && (input.type === "object" || Object.keys(input).length === 0);
      const inputSchema = (isObject ? { type: "object", ...(input as object) } : { type: "object", properties: { input }, required: ["input"] }) as Tool["inputSchema"];
      tools.set(entry.name, {
        entry,
        wrapped: !isObject,
        tool: { name: entry.name, ...(tag.title && { title: tag.title }), ...(tag.description && { description: tag.description }), inputSchema, ...(tag.annotations && { annotations: tag.annotations }), _meta },
      });
    } else if (tag.kind === "resource") {
      const uri = tag.uri ?? `trellis://${entry.procedure}`;
      resources.set(uri, { entry, resource: { uri, name: tag.name ?? entry.procedure, ...(tag.description && { description: tag.description }), mimeType: tag.mimeType ?? "application/json", _meta } });
    } else {
      const input = inputOf(entry.procedure) as { properties?: Record<string, { description?: string }>; required?: string[] };
      const args = Object.entries(input.properties ?? {}).map(([name, schema]) => ({ name, ...(schema.description && { description: schema.description }), required: input.required?.includes(name) ?? false }));
      prompts.set(entry.name, { entry, prompt: { name: entry.name, ...(tag.title && { title: tag.title }), ...(tag.description && { description: tag.description }), arguments: args, _meta } });
    }
  }
  const toolList = [...tools.values()].map(({ tool }) => tool);
  const resourceList = [...resources.values()].map(({ resource }) => resource);
  const promptList = [...prompts.values()].map(({ prompt }) => prompt);
  const info = { name: config.serverInfo?.name ?? sealed.name, version: config.serverInfo?.version ?? (sealed.schema.version || "0") };
  const capabilities = { ...(tools.size > 0 && { tools: {} }), ...(resources.size > 0 && { resources: {} }), ...(prompts.size > 0 && { prompts: {} }) };
  // Used only for elicitation, which this server does not send.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  // One server for the app's life: its handlers find the caller of each request through the router.
  const router = new RequestRouter();
  const server = new Server(info, { capabilities, instructions: config.instructions, jsonSchemaValidator });
  const call = (requestId: RequestId, procedure: string, input: unknown) => {
    const { event, context } = router.caller(requestId);
    return sealed.call(procedure, input, { event, context, source: "mcp" });
  };
  // One tool call, the same whether the SDK's server or the direct path (direct.ts) brought it.
  const runTool = async (found: ToolEntry, args: Record<string, unknown> | undefined, event: RequestEvent, context: AppRpcContext): Promise<ToolOutcome> => {
    try {
      const output = await sealed.call(found.entry.procedure, found.wrapped ? args?.input : args, { event, context, source: "mcp" });
      const text = plain(found.entry.procedure, output);
      // Structured content is a JSON object: an object output whose JSON is one (not a Date's string).
      return { text, structured: text.charCodeAt(0) === 123, isError: false };
    } catch (error) {
      // A tool error, not a protocol error: the model sees the same code and message as /rpc.
      return { text: JSON.stringify(errorBody(sealed.toError(error, "mcp"))), structured: true, isError: true };
    }
  };
  if (tools.size > 0) {
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const found = tools.get(request.params.name);
      if (!found) throw new McpError(ErrorCode.InvalidParams, `No tool named "${request.params.name}"`);
      const { event, context } = router.caller(extra.requestId);
      const { text, structured, isError } = await runTool(found, request.params.arguments, event, context);
      return { content: [{ type: "text", text }], ...(structured && { structuredContent: JSON.parse(text) as Record<string, unknown> }), ...(isError && { isError }) };
    });
  }
  if (resources.size > 0) {
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: resourceList }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
      const found = resources.get(request.params.uri);
      if (!found) throw new McpError(ErrorCode.InvalidParams, `No resource at ${request.params.uri}`);
      const output = await call(extra.requestId, found.entry.procedure, undefined).catch((error) => protocolError(sealed, error));
      const mimeType = found.resource.mimeType!;
      return { contents: [{ uri: found.resource.uri, mimeType, text: typeof output === "string" ? output : plain(found.entry.procedure, output) }] };
    });
  }
  if (prompts.size > 0) {
    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: promptList }));
    server.setRequestHandler(GetPromptRequestSchema, async (request, extra): Promise<GetPromptResult> => {
      const found = prompts.get(request.params.name);
      if (!found) throw new McpError(ErrorCode.InvalidParams, `No prompt named "${request.params.name}"`);
      const output = await call(extra.requestId, found.entry.procedure, request.params.arguments ?? {}).catch((error) => protocolError(sealed, error));
      return promptResult(output, found.prompt.description);
    });
  }
  const connected = server.connect(router);

  return {
    async handle(event, context, text) {
      // The common case, a plain tools/call, skips the SDK's transport and server (direct.ts).
      const direct = text !== undefined && !config.enableDnsRebindingProtection ? directCall(event.request, text, (name) => tools.has(name)) : undefined;
      if (direct) {
        return runTool(tools.get(direct.name)!, direct.args, event, context).then(
          (outcome) => directAnswer(direct.id, outcome),
          (error: unknown) => directFailure(direct.id, error),
        );
      }
      await connected;
      if (text !== undefined) event.request = new Request(event.request, { body: text });
      // Stateless Streamable HTTP: the SDK's transport for this one HTTP request (JSON answers).
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        enableDnsRebindingProtection: config.enableDnsRebindingProtection ?? false,
        allowedHosts: config.allowedHosts,
        allowedOrigins: config.allowedOrigins,
      });
      router.attach(transport, { event, context });
      return transport.handleRequest(event.request);
    },
    close: () => server.close(),
  };
}

/** Outside tools MCP has only protocol errors: the gate's status picks the JSON-RPC code, its body rides in `data`. */
function protocolError(sealed: SealedApp, error: unknown): never {
  const mapped = sealed.toError(error, "mcp");
  const code = mapped.status >= 500 ? ErrorCode.InternalError : mapped.status === 400 || mapped.status === 404 ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
  throw new McpError(code, mapped.message, errorBody(mapped));
}

/** A prompt procedure returns text, a list of messages, or `{ description?, messages }`. */
function promptResult(output: unknown, description: string | undefined): GetPromptResult {
  if (typeof output === "string") return { ...(description && { description }), messages: [{ role: "user", content: { type: "text", text: output } }] };
  if (Array.isArray(output)) return { ...(description && { description }), messages: output as GetPromptResult["messages"] };
  return output as GetPromptResult;
}
