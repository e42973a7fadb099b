// The rate limit counts `/rpc`, `/rest` and `/mcp`, but `.mcp({ path })` can serve the MCP endpoint
// elsewhere: there every tool call ran uncounted, with no RateLimit-* headers, however many an
// address sent. The App's rate limit now counts the MCP endpoint at whatever path it is served.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { App, mcp } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
const toolCall = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "tick", arguments: {} } });

describe("the rate limit on an MCP endpoint served at another path", () => {
  let runs = 0;
  let built: any;
  beforeAll(() => {
    built = new App({ db: sqliteMemory(), rateLimit: { max: 2, windowMs: 60_000 }, onError: () => {} })
      .procedure("tick", (base) => base.meta(mcp.tool({ description: "Counts its runs" })).handler(() => ++runs))
      .mcp({ path: "/agents/mcp" })
      .build();
  });
  afterAll(() => built.close());

  const call = () =>
    built.handle(new Request("http://localhost/agents/mcp", { method: "POST", headers: MCP_HEADERS, body: toolCall }), { clientAddress: "198.51.100.7" });

  it("counts each call and answers 429 past the budget, before the tool runs", async () => {
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.headers.get("RateLimit-Remaining")).toBe("1");
    expect((await call()).status).toBe(200);
    const third = await call();
    expect(third.status).toBe(429);
    expect(third.headers.get("Retry-After")).not.toBeNull();
    expect(runs).toBe(2);
  });
});
