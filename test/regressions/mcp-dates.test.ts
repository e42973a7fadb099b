import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

/**
 * MCP answers in plain JSON, as REST does (kernel/wire/plain-json.ts: "a `date` column as its
 * `YYYY-MM-DD` day"); a resource tool gave every `date` column as a full instant instead.
 */
const v1 = schema("1").table("event", (t) => ({ id: t.serial().primaryKey(), title: t.text(), day: t.date() })).build();

describe("MCP resource tools and date columns", () => {
  let server: RunningServer;
  let client: Client;
  beforeAll(async () => {
    const app = new App({ db: sqliteMemory() })
      .schema(v1)
      .resource("event", { permissions: { list: "public", get: "public" }, mcp: ["list", "get"] })
      .mcp();
    server = await serve(app, { port: 0, handleSignals: false });
    await (server.app as any).db.insertInto("event").values({ title: "launch", day: "2024-03-04" }).execute();
    client = new Client({ name: "trellis-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("writes a date column as its day, as REST does", async () => {
    const listed: any = await client.callTool({ name: "event_list", arguments: {} });
    expect(JSON.parse(listed.content[0].text)).toEqual([{ id: 1, title: "launch", day: "2024-03-04" }]);
    const got: any = await client.callTool({ name: "event_get", arguments: { where: { id: 1 } } });
    expect(got.structuredContent).toEqual({ id: 1, title: "launch", day: "2024-03-04" });
  });
});
