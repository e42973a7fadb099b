// One request, one call: no surface runs several procedure calls for one count of the rate limit.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { App, mcp } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
const toolCall = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "tick", arguments: {} } });

describe("calls per request", () => {
  let runs = 0;
  let built: any;
  const onError = vi.fn();
  beforeAll(async () => {
    built = new App({ db: sqliteMemory(), rateLimit: { max: 5, windowMs: 60_000 }, onError })
      .procedure("tick", (base) => base.meta(mcp.tool({ description: "Counts its runs" })).handler(() => ++runs))
      .mcp()
      .build();
  });
  afterAll(() => built.close());

  let address = 0;
  /** Each case from its own address, so each starts with a full budget. */
  const post = (path: string, body: string, headers: Record<string, string>) =>
    built.handle(new Request(`http://localhost${path}`, { method: "POST", headers, body }), { clientAddress: `198.51.100.${++address}` });

  it("MCP: a JSON-RPC batch is refused with 400 before any call runs, and still costs its request", async () => {
    runs = 0;
    const batch = await post("/mcp", JSON.stringify(Array.from({ length: 20 }, (_, i) => toolCall(i + 1))), MCP_HEADERS);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid Request: JSON-RPC batches are not accepted; send one message per request" },
      id: null,
    });
    expect(batch.headers.get("RateLimit-Remaining")).toBe("4");
    expect(runs).toBe(0);
  });

  it("MCP: a batch of one, or with blank space before it, is a batch too", async () => {
    runs = 0;
    for (const body of [JSON.stringify([toolCall(1)]), `\n \t[${JSON.stringify(toolCall(1))}]`]) {
      expect((await post("/mcp", body, MCP_HEADERS)).status).toBe(400);
    }
    expect(runs).toBe(0);
  });

  it("MCP: one message per request runs once and counts once", async () => {
    runs = 0;
    const single = await post("/mcp", JSON.stringify(toolCall(1)), MCP_HEADERS);
    expect(single.status).toBe(200);
    expect(((await single.json()) as any).result.content).toEqual([{ type: "text", text: "1" }]);
    expect(single.headers.get("RateLimit-Remaining")).toBe("4");
    expect(runs).toBe(1);
    // Malformed JSON still gets the MCP transport's own answer.
    const malformed = await post("/mcp", "{not json", MCP_HEADERS);
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).error.code).toBe(-32700);
  });

  it("MCP: a body the client stops sending mid-way is a 400, runs nothing and reports nothing", async () => {
    runs = 0;
    onError.mockClear();
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
        controller.error(new Error("aborted"));
      },
    });
    const response = await built.handle(new Request("http://localhost/mcp", { method: "POST", headers: MCP_HEADERS, body, duplex: "half" } as RequestInit), {
      clientAddress: "198.51.100.200",
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toEqual({ code: -32700, message: "Parse error: the request body could not be read" });
    expect(runs).toBe(0);
    expect(onError).not.toHaveBeenCalled();
  });

  it("/rpc: oRPC batch requests are not served (no batch handler), so nothing runs", async () => {
    runs = 0;
    const requests = Array.from({ length: 20 }, () => ({ url: "http://localhost/rpc/tick", method: "POST", headers: {}, body: { json: {} } }));
    for (const mode of ["buffered", "streaming"]) {
      const batch = await post("/rpc/tick/__batch__", JSON.stringify(requests), { "content-type": "application/json", "x-orpc-batch": mode });
      expect(batch.status).toBe(404);
      expect(batch.headers.get("RateLimit-Remaining")).toBe("4");
    }
    expect(runs).toBe(0);
  });
});
