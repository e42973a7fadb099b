/**
 * MCP's per-request work, counted: the server, its handlers and the tool listing (JSON Schemas
 * from zod) are built once per app, never per request, and a plain `tools/call` needs no SDK
 * transport at all (test/mcp/direct.test.ts shows its answer is the SDK's, byte for byte).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ZodToJsonSchemaConverter } from "@orpc/zod/zod4";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { App, mcp } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
const post = (built: any, body: unknown, extra: Record<string, string> = {}) =>
  built.handle(new Request("http://localhost/mcp", { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) })).then(async (response: Response) => ({ status: response.status, body: await response.json() }));

describe("MCP work per request", () => {
  let built: any;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const conversions = vi.spyOn(ZodToJsonSchemaConverter.prototype, "convert");
  const handlers = vi.spyOn(Server.prototype, "setRequestHandler");
  const transports = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");

  beforeAll(async () => {
    built = await new App({ name: "work", db: sqliteMemory(), onError: () => {} })
      .procedure("math.add", (base) => base.meta(mcp.tool()).input(z.object({ a: z.number(), b: z.number() })).handler(({ input }) => input.a + input.b))
      .procedure("whoami", (base) => base.meta(mcp.tool()).handler(({ context }) => context.headers.get("x-caller")))
      .procedure("slow", (base) => base.meta(mcp.tool()).handler(() => released.then(() => "done")))
      .mcp()
      .start();
  });
  afterAll(async () => {
    await built.close();
    conversions.mockRestore();
    handlers.mockRestore();
    transports.mockRestore();
  });

  it("builds the listing and the server once per process, not per request", async () => {
    const listed = conversions.mock.calls.length;
    const registered = handlers.mock.calls.length;
    expect(listed).toBe(1); // the one tool with an input schema, at start
    transports.mockClear();
    for (let i = 0; i < 5; i++) {
      expect((await post(built, { jsonrpc: "2.0", id: i, method: "tools/list" })).body.result.tools).toHaveLength(3);
      expect((await post(built, { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "math_add", arguments: { a: i, b: 1 } } })).body.result.content[0].text).toBe(String(i + 1));
    }
    expect(conversions.mock.calls.length).toBe(listed);
    expect(handlers.mock.calls.length).toBe(registered);
    expect(transports.mock.calls.length).toBe(5); // the lists only
  });

  it("answers concurrent requests that share a JSON-RPC id each with its own caller's result", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(built, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } }, { "x-caller": `caller-${i}` })),
    );
    expect(answers.map((answer) => [answer.status, answer.body.id, JSON.parse(answer.body.result.content[0].text)])).toEqual(
      Array.from({ length: 20 }, (_, i) => [200, 1, `caller-${i}`]),
    );
  });

  it("lets no client cancel another's request: a cancellation names an id only its sender knows", async () => {
    // `_meta` sends the call through the SDK's server, where requests in flight can be cancelled.
    const slow = post(built, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow", arguments: {}, _meta: {} } });
    for (let id = 0; id < 100; id++) {
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } };
      expect((await built.handle(new Request("http://localhost/mcp", { method: "POST", headers, body: JSON.stringify(cancel) }))).status).toBe(202);
    }
    release();
    const answer = await slow;
    expect([answer.status, answer.body.result.content[0].text]).toEqual([200, '"done"']);
  });

  it("answers an unknown method with the JSON-RPC error under the client's id", async () => {
    const answer = await post(built, { jsonrpc: "2.0", id: "abc", method: "nope/nothing" });
    expect(answer.body).toEqual({ jsonrpc: "2.0", id: "abc", error: { code: -32601, message: "Method not found" } });
  });
});
