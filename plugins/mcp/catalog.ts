import type { AnyProcedure } from "@orpc/server";
import type { McpTag } from "../../kernel/index.js";

/** A tagged procedure as MCP lists it. */
export interface McpEntry {
  /** The procedure called through the gate. */
  procedure: string;
  /** The MCP name: the procedure name with dots as underscores (`post.search` is `post_search`). */
  name: string;
  tag: McpTag;
}

/**
 * The procedures visible over MCP: only those tagged with `mcp.tool()`, `mcp.resource()` or
 * `mcp.prompt()`, and never `_admin.*` or `file.*` (SPEC.md, Endpoints rule 3), whatever their tag.
 */
export function mcpCatalog(procedures: ReadonlyMap<string, AnyProcedure>): McpEntry[] {
  const entries: McpEntry[] = [];
  for (const [name, procedure] of procedures) {
    if (name.startsWith("_admin.") || name.startsWith("file.")) continue;
    const tag = (procedure["~orpc"].meta as { mcp?: McpTag }).mcp;
    if (tag) entries.push({ procedure: name, name: name.replaceAll(".", "_"), tag });
  }
  return entries;
}
