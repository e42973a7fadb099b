// Who may call each procedure, as every surface reports it, is what an anonymous call answers.
// `trellis routes` called `{name}.page`, `{name}.batch` and every `file.*` public and /openapi.json
// listed `file.upload` as needing no credential, though each answers 401 signed out: the route
// table, the document and the MCP listing each worked the rule out their own way. They now read one
// source (`declaredPermission`), and this walks every procedure of an app with every plugin on.
// A rule refuses a signed-out caller 401, except a function rule, which refuses 403 signed in or
// not (SPEC.md: "custom functions (403 on false)").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { routeTable } from "../../presets/cli/commands/routes.js";
import { App, mcp } from "../../presets/trellis.js";
import { ORIGIN } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth({ apiKeys: true })
  .files()
  .table("open", (t) => ({ id: t.serial().primaryKey(), title: t.text().nullable() }))
  .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text().nullable(), ownerId: t.text().nullable() }))
  .table("memo", (t) => ({ id: t.serial().primaryKey(), title: t.text().nullable() }))
  .build();
const signedIn = ({ context }: { context: { user: unknown } }) => context.user !== null;

function createApp() {
  return new App({ name: "Access", baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), storage: memoryStorage(), onError: () => undefined })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .admin({ ui: false })
    .files({ permissions: { upload: "authenticated", list: signedIn, get: "owner", delete: "admin" } })
    .resource("open", { live: true, mcp: ["list", "page", "batch"] })
    .resource("task", { ownerColumn: "ownerId", live: true, mcp: ["list", "create"], permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } })
    .resource("memo", { permissions: { list: signedIn, get: "public", create: "public", update: "admin", delete: "public" } })
    .procedure("hello", (base) => base.meta(mcp.tool()).handler(() => "hi"))
    .procedure("me", (base) => base.meta(mcp.resource()).handler(({ context }) => context.user!.id), { permission: "authenticated" })
    .procedure("ops", (base) => base.meta(mcp.prompt()).input(z.object({ topic: z.string() }).optional()).handler(() => "ops"), { permission: "admin", roles: ["ops"] })
    .procedure("members", (base) => base.meta(mcp.tool()).handler(() => "members"), { permission: signedIn })
    .jobs()
    .mail({ from: "Access <no-reply@example.test>" })
    .webhooks({ endpoints: [{ url: "http://127.0.0.1:9/hooks", secret: `whsec_${Buffer.from("a-webhook-secret-of-32-bytes!!!!").toString("base64")}`, tables: ["open"] }], backoff: false })
    .backups()
    .openapi()
    .mcp();
}

/** An input that passes validation where a rule runs after it (function rules): a key for one-row actions, one item per write for a batch. */
function inputFor(name: string): unknown {
  if (name.endsWith(".batch")) return { create: [{}], update: [{ where: { id: 1 }, data: { title: "x" } }], delete: [{ where: { id: 1 } }] };
  if (/\.(get|delete)$/.test(name) && !name.startsWith("file.")) return { where: { id: 1 } };
  if (name.endsWith(".update")) return { where: { id: 1 }, data: { title: "x" } };
  return {};
}

describe("one source for who may call a procedure", () => {
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  let rows: ReturnType<typeof routeTable>;
  let document: any;
  beforeAll(async () => {
    app = await createApp().start();
    rows = routeTable(app as never);
    document = await (await app.handle(new Request(`${ORIGIN}/openapi.json`))).json();
  }, 120_000);
  afterAll(() => app?.close());

  /** The status of an anonymous call over /rpc (a stream is cancelled once its status is known). */
  async function anonymous(name: string): Promise<number> {
    const form = name === "file.upload" ? new FormData() : undefined;
    form?.set("data", JSON.stringify({ json: { file: {} }, meta: [], maps: [["file"]] }));
    form?.set("0", new Blob(["hi"], { type: "text/plain" }), "hi.txt");
    const response = await app.handle(
      new Request(`${ORIGIN}/rpc/${name.replaceAll(".", "/")}`, {
        method: "POST",
        ...(form ? { body: form } : { headers: { "content-type": "application/json" }, body: JSON.stringify({ json: inputFor(name) }) }),
      }),
    );
    await response.body?.cancel();
    return response.status;
  }

  it("reports every procedure public exactly when an anonymous call is not refused (401, or 403 from a function rule)", async () => {
    const procedures = rows.filter(([kind]) => kind === "procedure");
    expect(procedures.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const [, name, permission] of procedures) {
      const status = await anonymous(name);
      const refusal = permission === "public" ? undefined : permission === "function" ? 403 : 401;
      const holds = refusal === undefined ? status !== 401 && status !== 403 : status === refusal;
      if (!holds) wrong.push(`${name}: reported ${permission}, anonymous call answered ${status}`);
    }
    expect(wrong).toEqual([]);
    // The ones that were reported public.
    const permission = Object.fromEntries(procedures.map(([, name, rule]) => [name, rule]));
    expect(permission).toMatchObject({
      "task.page": "owner",
      "task.batch": "authenticated",
      "memo.page": "function",
      "memo.batch": "admin (admin)",
      "open.batch": "public",
      "file.upload": "authenticated",
      "file.list": "function",
      "file.get": "owner",
      "file.delete": "admin (admin)",
      "file.attach": "owner",
      members: "function",
      ops: "admin (ops)",
    });
  }, 120_000);

  it("lists security [{}] in /openapi.json exactly for the procedures the route table calls public", () => {
    const permission = new Map(rows.map(([, name, rule]) => [name, rule]));
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string; security?: unknown[] }>>).flatMap((item) => Object.values(item)).filter((operation) => typeof operation?.operationId === "string");
    const mismatched: string[] = [];
    let checked = 0;
    for (const operation of operations) {
      const name = operation.operationId.replace(/\.body$/, "");
      if (!permission.has(name)) continue;
      checked++;
      const open = JSON.stringify(operation.security) === "[{}]";
      if (open !== (permission.get(name) === "public")) mismatched.push(`${name}: security ${JSON.stringify(operation.security)}, route table ${permission.get(name)}`);
    }
    expect(checked).toBeGreaterThan(20);
    expect(mismatched).toEqual([]);
  });

  it("gives each MCP tool, resource and prompt the same access", async () => {
    const permission = new Map(rows.map(([, name, rule]) => [name.replaceAll(".", "_"), rule]));
    const listed: Record<string, string> = {};
    for (const method of ["tools/list", "resources/list", "prompts/list"]) {
      const response = await app.handle(
        new Request(`${ORIGIN}/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method }),
        }),
      );
      const text = await response.text();
      const message = JSON.parse(text.startsWith("{") ? text : text.split("\n").find((line) => line.startsWith("data: "))!.slice(6));
      const entries: { name: string; _meta?: Record<string, string> }[] = Object.values(message.result).find(Array.isArray) as never;
      for (const entry of entries) listed[entry.name] = entry._meta?.["trellis/access"] ?? "missing";
    }
    expect(Object.keys(listed).sort()).toEqual(["hello", "me", "members", "open_batch", "open_list", "open_page", "ops", "task_create", "task_list"]);
    for (const [name, access] of Object.entries(listed)) expect(access, name).toBe(permission.get(name));
  });
});
