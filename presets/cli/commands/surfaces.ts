/** What `trellis new --surfaces` can add. Kept apart so the CLI lists them without loading `new`. */
export const SURFACES = ["openapi", "mcp", "files", "live", "admin"] as const;
export type Surface = (typeof SURFACES)[number];

/** The optional peers each surface needs (the plugins' own lists), at the versions Trellis is tested with. */
export const SURFACE_PEERS: Record<Surface, string[]> = {
  openapi: ["@orpc/openapi", "@orpc/zod", "@orpc/json-schema", "swagger-ui-dist"],
  mcp: ["@modelcontextprotocol/sdk", "@orpc/zod"],
  // Uploaded files on disk, through unstorage's fs driver (src/app.ts).
  files: ["unstorage"],
  live: [],
  admin: [],
};
