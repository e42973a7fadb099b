import { TrellisError, definePlugin, installLine, missingPeers, type AppPlugin, type AppRpcContext, type RequestEvent, type SealedApp } from "../../kernel/index.js";
import { readMessage } from "./batch.js";
import { mcpCatalog } from "./catalog.js";
import { MCP_DUPLICATE_NAME, MCP_PEER_MISSING } from "./errors.js";
import type { McpRuntime } from "./server.js";

export { mcp, type McpMeta, type McpTag, type McpToolOptions, type McpResourceOptions, type McpPromptOptions } from "../../kernel/index.js";

export interface McpConfig {
  /**
   * Gate by flag.
   * @default true
   */
  enabled?: boolean;
  /**
   * Mount path.
   * @default "/mcp"
   */
  path?: string;
  /**
   * Identity reported at initialize.
   * @default { name: the app's name, version: the latest schema version }
   */
  serverInfo?: { name?: string; version?: string };
  /** Guidance returned at initialize. */
  instructions?: string;
  /**
   * Rejects `Origin` and `Host` values outside `allowedOrigins` / `allowedHosts`.
   * @default false
   */
  enableDnsRebindingProtection?: boolean;
  /** Exact-match allowlist of `Origin` values, used when the protection is on. */
  allowedOrigins?: string[];
  /** Exact-match allowlist of `Host` values (with the port), used when the protection is on. */
  allowedHosts?: string[];
}

/** The optional peers of the MCP surface (SPEC.md, Endpoints rule 3). */
const PEERS = ["@modelcontextprotocol/sdk", "@orpc/zod"];
/** The MCP server module, loaded by the first app that serves MCP and kept for the process (as the REST runtime is). */
let server: Promise<typeof import("./server.js")> | undefined;

/**
 * `.mcp()`: an MCP server over Streamable HTTP (stateless, JSON responses) at `path`, exposing the
 * procedures tagged with `mcp.tool()`, `mcp.resource()` or `mcp.prompt()`. Stage `surface`: it reads
 * the finished procedure list. Every call goes through the kernel's gate with the caller's session,
 * so the cookie or API key applies exactly as on `/rpc`.
 */
export function mcpPlugin(config: McpConfig = {}): AppPlugin {
  const path = config.path ?? "/mcp";
  let runtime: McpRuntime | undefined;
  return definePlugin({
    name: "mcp",
    stage: "surface",
    validate() {
      if (config.enabled === false) return;
      const missing = missingPeers(PEERS);
      if (missing.length > 0) {
        throw new TrellisError(MCP_PEER_MISSING, `.mcp() needs the optional peer packages ${missing.map((name) => `"${name}"`).join(", ")}. Install them: ${installLine(missing)}`, { plugin: "mcp", hook: "validate" });
      }
    },
    build(ctx) {
      if (config.enabled === false) return;
      // Here, not in validate: every procedure (user plugins' too) exists by the surface stage.
      const seen = new Map<string, string>();
      for (const entry of mcpCatalog(ctx.procedures)) {
        const name = entry.tag.kind === "resource" ? (entry.tag.uri ?? `trellis://${entry.procedure}`) : `${entry.tag.kind}:${entry.name}`;
        const other = seen.get(name);
        if (other) throw new TrellisError(MCP_DUPLICATE_NAME, `Procedures "${other}" and "${entry.procedure}" have the same MCP name (${name})`, { plugin: "mcp", hook: "build" });
        seen.set(name, entry.procedure);
      }
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      // The SDK loads asynchronously: the listings are built once, before the first request.
      ctx.hooks.ready.tap(async () => {
        if (runtime) return;
        const { mcpRuntime } = await (server ??= import("./server.js"));
        runtime = mcpRuntime(sealed!, mcpCatalog(sealed!.procedures), config);
      });
      ctx.hooks.close.tap(async () => {
        await runtime?.close();
      });
      // POST only: stateless Streamable HTTP has no stream to open (GET) or session to end (DELETE),
      // so those get the kernel's 405. One message per request: a batch is refused (see batch.ts).
      const handler = async (event: RequestEvent, context: AppRpcContext) => {
        const text = await readMessage(event);
        return text instanceof Response ? text : runtime!.handle(event, context, text);
      };
      return { routes: [{ method: "POST", path, handler }] };
    },
  });
}
