// One permission model, proved: the same cases against every surface, expecting the same decision.
// Adding a surface later means adding a column (an entry in `surfaces`).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { App, mcp } from "../../presets/trellis.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp } from "../support/auth.js";

const v1 = schema("1")
  .auth({ apiKeys: true })
  .table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text(), ownerId: t.text().references("user", "id") }))
  .table("setting", (t) => ({ key: t.text().primaryKey(), value: t.text() }))
  .build();

const RESOURCES = new Set(["note", "setting"]);

type Caller = "anonymous" | "ada" | "bo" | "admin" | "apiKey";
interface Case {
  what: string;
  caller: Caller;
  procedure: string;
  input?: unknown;
  status: number;
}

// Row ids fixed by the seeding in beforeAll: ada owns note 1, bo owns note 2; setting "theme".
const cases: Case[] = [
  { what: "anonymous lists owner-scoped notes", caller: "anonymous", procedure: "note.list", status: 401 },
  { what: "anonymous creates", caller: "anonymous", procedure: "note.create", input: { text: "x" }, status: 401 },
  { what: "signed in creates", caller: "ada", procedure: "note.create", input: { text: "mine" }, status: 200 },
  { what: "signed in lists their own", caller: "ada", procedure: "note.list", status: 200 },
  { what: "owner reads", caller: "ada", procedure: "note.get", input: { where: { id: 1 } }, status: 200 },
  { what: "owner updates", caller: "ada", procedure: "note.update", input: { where: { id: 1 }, data: { text: "edited" } }, status: 200 },
  { what: "non-owner reads", caller: "bo", procedure: "note.get", input: { where: { id: 1 } }, status: 404 },
  { what: "non-owner updates", caller: "bo", procedure: "note.update", input: { where: { id: 1 }, data: { text: "taken" } }, status: 404 },
  { what: "non-owner deletes", caller: "bo", procedure: "note.delete", input: { where: { id: 1 } }, status: 404 },
  { what: "anonymous reads a row", caller: "anonymous", procedure: "note.get", input: { where: { id: 1 } }, status: 401 },
  { what: "admin lists settings", caller: "admin", procedure: "setting.list", status: 200 },
  { what: "admin reads a setting", caller: "admin", procedure: "setting.get", input: { where: { key: "theme" } }, status: 200 },
  { what: "signed in without the role lists settings", caller: "ada", procedure: "setting.list", status: 403 },
  { what: "anonymous lists settings", caller: "anonymous", procedure: "setting.list", status: 401 },
  { what: "API key reads its user's note", caller: "apiKey", procedure: "note.get", input: { where: { id: 1 } }, status: 200 },
  { what: "API key reads another user's note", caller: "apiKey", procedure: "note.get", input: { where: { id: 2 } }, status: 404 },
  { what: "API key calls an authenticated procedure", caller: "apiKey", procedure: "me", status: 200 },
  { what: "anonymous calls an authenticated procedure", caller: "anonymous", procedure: "me", status: 401 },
  { what: "signed in calls an admin procedure", caller: "bo", procedure: "stats", status: 403 },
  { what: "admin calls an admin procedure", caller: "admin", procedure: "stats", status: 200 },
  { what: "bad input on create", caller: "ada", procedure: "note.create", input: { text: 5 }, status: 400 },
  { what: "bad key on get", caller: "ada", procedure: "note.get", input: { where: { id: "one" } }, status: 400 },
  { what: "missing row", caller: "ada", procedure: "note.get", input: { where: { id: 9999 } }, status: 404 },
  { what: "missing row on update", caller: "admin", procedure: "setting.update", input: { where: { key: "nope" }, data: { value: "x" } }, status: 404 },
];

/** A surface: runs one procedure call as the caller and answers the HTTP status it maps to. */
type Surface = (call: { headers: Record<string, string>; caller: Caller; procedure: string; input?: unknown }) => Promise<number>;

let server: RunningServer;
const headers: Record<Caller, Record<string, string>> = { anonymous: {}, ada: {}, bo: {}, admin: {}, apiKey: {} };
const mcpClients = new Map<Caller, Client>();

const surfaces: Record<string, Surface> = {
  rpc: async ({ headers, procedure, input }) => (await rpc(server.app, procedure, input, headers)).status,
  rest: async ({ headers, procedure, input }) => {
    const dot = procedure.lastIndexOf(".");
    const [resource, action] = [procedure.slice(0, dot), procedure.slice(dot + 1)];
    const args = (input ?? {}) as { where?: Record<string, unknown>; data?: unknown };
    const key = args.where && encodeURIComponent(String(Object.values(args.where)[0]));
    const [method, path, body] = !RESOURCES.has(resource)
      ? ["POST", `/rest/${procedure.split(".").join("/")}`, input]
      : action === "list"
        ? ["GET", `/rest/${resource}`, undefined]
        : action === "create"
          ? ["POST", `/rest/${resource}`, input]
          : action === "update"
            ? ["PATCH", `/rest/${resource}/${key}`, args.data]
            : [action === "get" ? "GET" : "DELETE", `/rest/${resource}/${key}`, undefined];
    const response = await server.app.handle(
      new Request(`${ORIGIN}${path}`, {
        method,
        headers: { ...headers, ...(body !== undefined && { "content-type": "application/json" }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    );
    await response.body?.cancel();
    return response.status;
  },
  mcp: async ({ caller, procedure, input }) => {
    const result: any = await mcpClients.get(caller)!.callTool({ name: procedure.replaceAll(".", "_"), arguments: (input ?? {}) as Record<string, unknown> });
    return result.isError ? result.structuredContent.status : 200;
  },
};

beforeAll(async () => {
  const app = new App({ name: "permissions", baseUrl: ORIGIN, db: sqliteMemory(), onError: () => {} })
    .schema(v1)
    .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
    .resource("note", { ownerColumn: "ownerId", permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" }, mcp: true })
    .resource("setting", { permissions: { list: "admin", get: "admin", create: "admin", update: "admin", delete: "admin" }, mcp: true })
    .procedure("me", (base) => base.meta(mcp.tool()).handler(({ context }) => ({ id: context.user!.id })), { permission: "authenticated" })
    .procedure("stats", (base) => base.meta(mcp.tool()).handler(async ({ context }) => ({ notes: await context.db.query.note.count() })), { permission: "admin" })
    .openapi({ docs: false })
    .mcp();
  server = await serve(app, { port: 0, handleSignals: false });
  const ada = await signUp(server.app, "ada@example.test");
  const bo = await signUp(server.app, "bo@example.test");
  const root = await signUp(server.app, "root@example.test");
  await server.app.db.updateTable("user").set({ role: "admin" }).where("id", "=", root.userId).execute();
  const created = await server.app.handle(
    new Request(`${ORIGIN}/api/auth/api-key/create`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, cookie: ada.cookie },
      body: JSON.stringify({ name: "ci" }),
    }),
  );
  const key = ((await created.json()) as { key: string }).key;
  Object.assign(headers, { ada: { cookie: ada.cookie }, bo: { cookie: bo.cookie }, admin: { cookie: root.cookie }, apiKey: { "x-api-key": key } });
  await (server.app.client(headers.ada) as any).note.create({ text: "ada's" });
  await (server.app.client(headers.bo) as any).note.create({ text: "bo's" });
  await server.app.db.insertInto("setting").values({ key: "theme", value: "dark" }).execute();
  for (const caller of Object.keys(headers) as Caller[]) {
    const client = new Client({ name: "permissions", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: headers[caller] } }));
    mcpClients.set(caller, client);
  }
});

afterAll(async () => {
  await Promise.all([...mcpClients.values()].map((client) => client.close()));
  await server?.close();
});

describe.each(Object.keys(surfaces))("the permission table over %s", (surface) => {
  it.each(cases)("$what: $status", async ({ caller, procedure, input, status }) => {
    expect(await surfaces[surface]!({ headers: headers[caller], caller, procedure, input })).toBe(status);
  });
});
