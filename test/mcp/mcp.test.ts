import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createBlog } from "../../examples/blog/app.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { App, mcp } from "../../presets/trellis.js";
import { missingPeers } from "../../kernel/index.js";
import { closeAfterEach, errorOf, request, sqliteMemory } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";

const opened: Client[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close()));
});

/** The SDK's own client over Streamable HTTP, as a desktop MCP client connects. */
async function connect(server: RunningServer, headers: Record<string, string> = {}, path = "/mcp"): Promise<Client> {
  const client = new Client({ name: "trellis-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${path}`), { requestInit: { headers } }));
  opened.push(client);
  return client;
}

const textOf = (result: any) => JSON.parse(result.content[0].text);

describe("MCP on the blog example", () => {
  let server: RunningServer;
  let ada: SignedIn;
  beforeAll(async () => {
    server = await serve(createBlog({ ...sqliteMemory(), live: localLive() }, { onError: () => {} }), { port: 0, handleSignals: false });
    ada = await signUp(server.app, "ada@example.test");
    const client: any = server.app.client({ cookie: ada.cookie, origin: "http://localhost:3000" });
    const published = await client.post.create({ title: "Gardens in winter", body: "Trellis and roses" });
    await client.post.publish({ id: published.id });
    await client.post.create({ title: "Draft about gardens" });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("initializes with the app's name, its schema version and the instructions", async () => {
    const client = await connect(server);
    expect(client.getServerVersion()).toEqual({ name: "Trellis Blog", version: "4" });
    expect(client.getInstructions()).toContain("post_search");
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
  });

  it("lists only tagged procedures, dots as underscores, with the input schema from zod", async () => {
    const client = await connect(server);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["post_search"]);
    expect(tools[0]).toMatchObject({
      description: expect.stringContaining("Search published blog posts"),
      annotations: { readOnlyHint: true },
      inputSchema: { type: "object", properties: { query: { type: "string", description: "Words to look for" } }, required: ["query"] },
    });
  });

  it("calls the tool through the gate and answers plain JSON", async () => {
    const client = await connect(server);
    const result: any = await client.callTool({ name: "post_search", arguments: { query: "roses" } });
    expect(result.isError).toBeFalsy();
    const posts = textOf(result);
    expect(posts.map((post: { title: string }) => post.title)).toEqual(["Gardens in winter"]);
    expect(posts[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it("returns bad input as a tool error with the code and message of /rpc", async () => {
    const client = await connect(server);
    const result: any = await client.callTool({ name: "post_search", arguments: { query: "" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatchObject({ code: "BAD_REQUEST", status: 400, message: expect.stringMatching(/^Invalid input: query/) });
    expect(result.structuredContent).toEqual(textOf(result));
    await expect(client.callTool({ name: "post_publish", arguments: { id: 1 } })).rejects.toThrow(/No tool named "post_publish"/);
  });

  it("answers GET with 405: stateless, no stream to open", async () => {
    const response = await fetch(`${server.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(response.status).toBe(405);
  });
});

const v1 = schema("3").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();

describe("MCP resources, prompts and options", () => {
  let server: RunningServer;
  const onError = vi.fn();
  beforeAll(async () => {
    const app = new App({ name: "Notes", db: sqliteMemory(), onError })
      .schema(v1)
      .resource("note", { mcp: ["list", "create"] })
      .procedure("stats", (base) => base.meta(mcp.resource({ uri: "notes://stats", description: "How many notes" })).handler(async ({ context }) => ({ notes: await context.db.query.note.count() })))
      .procedure("readme", (base) => base.meta(mcp.resource({ uri: "notes://readme", mimeType: "text/markdown" })).handler(() => "# Notes"))
      .procedure("note.summarise", (base) =>
        base
          .meta(mcp.prompt({ description: "Summarise the notes in a style" }))
          .input(z.object({ style: z.string().describe("How to write it") }))
          .handler(({ input }) => `Summarise every note, ${input.style}.`),
      )
      .procedure("echo", (base) => base.meta(mcp.tool({ description: "Echo a string" })).input(z.string()).handler(({ input }) => input))
      .procedure("crash", (base) =>
        base.meta(mcp.tool()).handler(() => {
          throw new Error("secret internals");
        }),
      )
      .procedure("file.peek", (base) => base.meta(mcp.tool()).handler(() => "never listed"))
      .mcp({ path: "/ai/mcp", serverInfo: { name: "notes-mcp", version: "9.9.9" }, enableDnsRebindingProtection: true, allowedOrigins: ["http://good.test"] });
    server = await serve(app, { port: 0, handleSignals: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves tools, resources and prompts from tagged procedures; file.* never", async () => {
    const client = await connect(server, {}, "/ai/mcp");
    expect(client.getServerVersion()).toEqual({ name: "notes-mcp", version: "9.9.9" });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["crash", "echo", "note_create", "note_list"]);

    const created: any = await client.callTool({ name: "note_create", arguments: { text: "first" } });
    expect(created.structuredContent).toEqual({ id: 1, text: "first" });
    const listed: any = await client.callTool({ name: "note_list", arguments: { where: { text: { startsWith: "fi" } } } });
    expect(textOf(listed)).toEqual([{ id: 1, text: "first" }]);
    // A non-object input travels as the `input` argument.
    expect(tools.find((tool) => tool.name === "echo")!.inputSchema).toEqual({ type: "object", properties: { input: { type: "string" } }, required: ["input"] });
    expect(textOf(await client.callTool({ name: "echo", arguments: { input: "hi" } }))).toBe("hi");

    const { resources } = await client.listResources();
    expect(resources).toEqual([
      { uri: "notes://stats", name: "stats", description: "How many notes", mimeType: "application/json", _meta: { "trellis/access": "public" } },
      { uri: "notes://readme", name: "readme", mimeType: "text/markdown", _meta: { "trellis/access": "public" } },
    ]);
    expect((await client.readResource({ uri: "notes://stats" })).contents).toEqual([{ uri: "notes://stats", mimeType: "application/json", text: '{"notes":1}' }]);
    expect((await client.readResource({ uri: "notes://readme" })).contents[0]).toMatchObject({ text: "# Notes" });

    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([{ name: "note_summarise", description: "Summarise the notes in a style", arguments: [{ name: "style", description: "How to write it", required: true }], _meta: { "trellis/access": "public" } }]);
    const prompt = await client.getPrompt({ name: "note_summarise", arguments: { style: "briefly" } });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Summarise every note, briefly." } }]);
    await expect(client.getPrompt({ name: "note_summarise", arguments: {} })).rejects.toThrow(/Invalid input: style/);
  });

  it("reports unexpected failures with source mcp and hides their details", async () => {
    const client = await connect(server, {}, "/ai/mcp");
    onError.mockClear();
    const result: any = await client.callTool({ name: "crash", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toEqual({ code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error" });
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![1]).toMatchObject({ source: "mcp" });
  });

  it("rejects a foreign Origin when DNS-rebinding protection is on", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
    const foreign = await fetch(`${server.url}/ai/mcp`, { method: "POST", headers: { ...headers, origin: "http://evil.test" }, body });
    expect(foreign.status).toBe(403);
    const allowed = await fetch(`${server.url}/ai/mcp`, { method: "POST", headers: { ...headers, origin: "http://good.test" }, body });
    expect(allowed.status).toBe(200);
  });
});

describe("MCP at build", () => {
  const build = closeAfterEach();

  it("mounts nothing with enabled: false", async () => {
    const app = build(new App({ db: sqliteMemory() }).procedure("ping", (base) => base.meta(mcp.tool()).handler(() => "pong")).mcp({ enabled: false }));
    expect((await request(app, "POST", "/mcp", { body: "{}" })).status).toBe(404);
  });

  it("names the optional peers that are not installed", () => {
    expect(missingPeers(["@modelcontextprotocol/sdk", "@orpc/zod", "@trellis-test/not-installed"])).toEqual(["@trellis-test/not-installed"]);
  });

  it("refuses two procedures with the same MCP name", () => {
    const app = new App({ db: sqliteMemory() })
      .procedure("a.b", (base) => base.meta(mcp.tool()).handler(() => 1))
      .procedure("a_b", (base) => base.meta(mcp.tool()).handler(() => 2))
      .mcp();
    expect(errorOf(() => app.build())).toMatchObject({ code: "MCP_DUPLICATE_NAME" });
  });
});
