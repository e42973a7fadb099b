/** Error codes of the mcp plugin. */
export const MCP_PEER_MISSING = "MCP_PEER_MISSING";
export const MCP_DUPLICATE_NAME = "MCP_DUPLICATE_NAME";
