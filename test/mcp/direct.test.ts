/**
 * A plain `tools/call` is answered without the SDK's transport and server; every other message goes
 * through them. The two must not be told apart: each call here is sent twice, once plain and once
 * with an empty `_meta` in its params (which the SDK accepts and ignores, but which sends the call
 * the SDK's way), and the two answers must match byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { App, RpcError, mcp } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

describe("MCP tools/call, direct and through the SDK", () => {
  let built: any;
  const transports = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");
  const send = async (body: unknown, extra: Record<string, string> = {}) => {
    const response: Response = await built.handle(new Request("http://localhost/mcp", { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) }));
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
  };
  /** The call answered directly, then through the SDK, and whether the SDK's transport served each. */
  const both = async (id: string | number, name: string, args?: unknown) => {
    const params = { name, ...(args !== undefined && { arguments: args }) };
    transports.mockClear();
    const direct = await send({ jsonrpc: "2.0", id, method: "tools/call", params });
    const directTransports = transports.mock.calls.length;
    const sdk = await send({ jsonrpc: "2.0", id, method: "tools/call", params: { ...params, _meta: {} } });
    expect([directTransports, transports.mock.calls.length]).toEqual([0, 1]);
    return { direct, sdk };
  };

  beforeAll(async () => {
    built = await new App({ name: "direct", db: sqliteMemory(), onError: () => {} })
      .procedure("math.add", (base) => base.meta(mcp.tool()).input(z.object({ a: z.number(), b: z.number() })).handler(({ input }) => input.a + input.b))
      .procedure("row", (base) =>
        base.meta(mcp.tool()).handler(() => ({ id: 7, title: 'He said "hi"\n', tags: ["a", "ü"], big: 2n ** 64n, at: new Date("2026-01-02T03:04:05.000Z"), nothing: null, skipped: undefined })),
      )
      .procedure("rows", (base) => base.meta(mcp.tool()).handler(() => [{ id: 1 }, { id: 2, note: "\u2028" }]))
      .procedure("when", (base) => base.meta(mcp.tool()).handler(() => new Date("2026-01-02T03:04:05.000Z")))
      .procedure("nothing", (base) => base.meta(mcp.tool()).handler(() => undefined))
      .procedure("echo", (base) => base.meta(mcp.tool()).input(z.string()).handler(({ input }) => input))
      .procedure("refuse", (base) =>
        base.meta(mcp.tool()).handler(() => {
          throw new RpcError("FORBIDDEN", { message: "no", data: { why: "closed" } });
        }),
      )
      .procedure("crash", (base) =>
        base.meta(mcp.tool()).handler(() => {
          throw new Error("secret internals");
        }),
      )
      .mcp()
      .start();
  });
  afterAll(async () => {
    await built.close();
    transports.mockRestore();
  });

  it("answers a number, an object, a list, a Date and nothing in the SDK's exact bytes", async () => {
    const cases: [string | number, string, unknown][] = [
      [1, "math_add", { a: 1, b: 2 }],
      ["abc", "row", {}],
      [2, "row", undefined],
      [3, "rows", {}],
      [4, "when", {}],
      [5, "nothing", {}],
      [6, "echo", { input: "hi" }],
    ];
    for (const [id, name, args] of cases) {
      const { direct, sdk } = await both(id, name, args);
      expect(direct).toEqual(sdk);
      expect(direct.status).toBe(200);
    }
    const { direct } = await both("abc", "row", {});
    expect(JSON.parse(direct.text)).toEqual({
      jsonrpc: "2.0",
      id: "abc",
      result: {
        content: [{ type: "text", text: '{"id":7,"title":"He said \\"hi\\"\\n","tags":["a","ü"],"big":"18446744073709551616","at":"2026-01-02T03:04:05.000Z","nothing":null}' }],
        structuredContent: { id: 7, title: 'He said "hi"\n', tags: ["a", "ü"], big: "18446744073709551616", at: "2026-01-02T03:04:05.000Z", nothing: null },
      },
    });
    // A Date is JSON text, not structured content.
    expect(JSON.parse((await both(4, "when", {})).direct.text).result).toEqual({ content: [{ type: "text", text: '"2026-01-02T03:04:05.000Z"' }] });
  });

  it("answers bad input, a refusal and a crash as the same tool errors", async () => {
    for (const [name, args] of [
      ["math_add", { a: "one" }],
      ["math_add", undefined],
      ["refuse", {}],
      ["crash", {}],
    ] as const) {
      const { direct, sdk } = await both(9, name, args);
      expect(direct).toEqual(sdk);
      expect(JSON.parse(direct.text).result.isError).toBe(true);
    }
    const crash = JSON.parse((await both(9, "crash", {})).direct.text);
    expect(crash.result.structuredContent).toEqual({ code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error" });
  });

  it("leaves anything else to the SDK, with its own answers", async () => {
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "math_add", arguments: { a: 1, b: 2 } } };
    const cases: [unknown, Record<string, string>, number, number?][] = [
      [{ ...call, params: { name: "nope", arguments: {} } }, {}, 200, -32602], // unknown tool: a JSON-RPC error
      [{ ...call, params: { ...call.params, arguments: [1] } }, {}, 200, -32603], // arguments not an object
      [{ ...call, id: 1.5 }, {}, 400], // not a JSON-RPC id
      [{ ...call, extra: true }, {}, 400], // not a JSON-RPC request
      [call, { accept: "application/json" }, 406],
      [call, { "content-type": "text/plain" }, 415],
      [call, { "mcp-protocol-version": "1999-01-01" }, 400],
      [{ jsonrpc: "2.0", method: "notifications/initialized" }, {}, 202],
    ];
    for (const [body, extra, status, code] of cases) {
      transports.mockClear();
      const answer = await send(body, extra);
      expect([answer.status, transports.mock.calls.length]).toEqual([status, 1]);
      if (code) expect(JSON.parse(answer.text).error.code).toBe(code);
    }
    transports.mockClear();
    expect((await send(call, { "content-type": "application/json; charset=utf-8" })).text).toBe('{"result":{"content":[{"type":"text","text":"3"}]},"jsonrpc":"2.0","id":1}');
    expect(transports.mock.calls.length).toBe(1);
  });
});
