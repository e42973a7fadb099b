/**
 * The `mcp` meta helper (a root export of `trellis`): tags a procedure for the MCP surface. It lives in
 * the kernel because any plugin may tag its procedures (resources do), and the mcp plugin reads the tags.
 *
 * ```ts
 * .procedure("post.search", (base) => base.meta(mcp.tool({ description: "Find posts" })).input(...).handler(...))
 * ```
 * Only tagged procedures are visible over MCP; it imports nothing, so `trellis` loads without the SDK.
 */
export interface McpToolOptions {
  /** What the tool does, for the model. */
  description?: string;
  title?: string;
  /** Hints for clients (MCP tool annotations). */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

export interface McpResourceOptions {
  /**
   * The resource's URI.
   * @default "trellis://<procedure name>"
   */
  uri?: string;
  /** @default the procedure name */
  name?: string;
  description?: string;
  /**
   * The content type of the resource text; a string output is sent as is, anything else as JSON.
   * @default "application/json"
   */
  mimeType?: string;
}

export interface McpPromptOptions {
  description?: string;
  title?: string;
}

export type McpTag =
  | ({ kind: "tool" } & McpToolOptions)
  | ({ kind: "resource" } & McpResourceOptions)
  | ({ kind: "prompt" } & McpPromptOptions);

/** The procedure meta the helper returns: `{ mcp: { kind, ... } }`. */
// A type alias, not an interface: it must fit the builder's `Record<string, unknown>` meta.
export type McpMeta = { mcp: McpTag };

export const mcp = Object.freeze({
  /** A tool: called with the procedure's input, answering its output. */
  tool: (options: McpToolOptions = {}): McpMeta => ({ mcp: { kind: "tool", ...options } }),
  /** A resource: read by URI, answering the output of the procedure called without input. */
  resource: (options: McpResourceOptions = {}): McpMeta => ({ mcp: { kind: "resource", ...options } }),
  /** A prompt: its arguments are the procedure's input; it returns text or `{ role, content }` messages. */
  prompt: (options: McpPromptOptions = {}): McpMeta => ({ mcp: { kind: "prompt", ...options } }),
});
