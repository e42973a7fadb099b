/**
 * Resource lifecycle hooks through the front door, on the embedded database and PostgreSQL: before*
 * in the write's transaction (filling a column, refusing with a status on every surface, writing
 * another table that rolls back with it), after* once committed (sending a job, a failure reported
 * and never a 500), batch and `_admin.data` firing once per row, and the change feed: rows, before
 * and actor on the event and in a `payload: "rows"` webhook, and nothing at all for a refused write.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import type { ChangeEvent } from "../../kernel/index.js";
import { App, RpcError } from "../../presets/trellis.js";
import { request, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { jobFamilies, openJobsDatabase, waitFor } from "../jobs/support.js";

const AUTH_SECRET = "a-test-secret-that-is-long-enough-0123456789";
const HOOK_SECRET = `whsec_${Buffer.from("a-webhook-secret-of-32-bytes!!!!").toString("base64")}`;
const v1 = schema("1")
  .auth()
  .table("task", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    slug: t.text().nullable(),
    status: t.text().default("open"),
    ownerId: t.text().nullable(),
  }))
  .table("audit", (t) => ({ id: t.serial().primaryKey(), what: t.text() }))
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text(), ownerId: t.text().nullable() }))
  .build();

const slugOf = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-");

describe.each(jobFamilies())("resource hooks on %s", (family) => {
  let database: Awaited<ReturnType<typeof openJobsDatabase>>;
  let built: any;
  let server: Server;
  const received: { headers: Record<string, string>; body: string }[] = [];
  const calls: unknown[][] = [];
  const seenByJob: unknown[] = [];
  const reported: unknown[] = [];
  const changes: ChangeEvent[] = [];
  let alice: SignedIn;
  let bob: SignedIn;
  let admin: SignedIn;
  const as = (who: SignedIn) => ({ cookie: who.cookie, origin: ORIGIN });
  const taskChanges = () => changes.filter((change) => change.table === "task");

  beforeAll(async () => {
    database = await openJobsDatabase(family);
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", () => {
        received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString("utf8") });
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const app = new App({ name: "hooks", baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind }, onError: (error) => void reported.push(error) })
      .schema(v1)
      .auth({ secret: AUTH_SECRET, emailAndPassword: { enabled: true } })
      .jobs({ schema: database.jobsSchema, pollingInterval: 0.5 })
      .job("task.created", {}, async ({ data, context }) => {
        // The job runs after the commit: it sees the row the hook was given.
        const row = await context.db.selectFrom("task").selectAll().where("id", "=", (data as { id: number }).id).executeTakeFirst();
        seenByJob.push(row);
      })
      .webhooks({
        endpoints: [
          { url, secret: HOOK_SECRET, tables: ["task"], payload: "rows" },
          // Keys only, on a resource without hooks: its writes read no row first.
          { url: `${url}/notes`, secret: HOOK_SECRET, tables: ["note"] },
        ],
        backoff: false,
      })
      .resource("note", { ownerColumn: "ownerId", permissions: { create: "authenticated", update: "owner", delete: "owner" } })
      .use({ name: "changes-tap", build: (ctx: any) => void ctx.hooks.changed.tap((change: ChangeEvent) => changes.push(change)) } as never)
      .resource("task", {
        ownerColumn: "ownerId",
        readonly: ["slug"],
        permissions: { create: "authenticated", update: "owner", delete: "owner" },
        mcp: true,
        hooks: {
          async beforeCreate({ data, trx, actor }) {
            calls.push(["beforeCreate", data.title, actor.admin]);
            // Written in the write's transaction: it rolls back with a refused write.
            await trx.insertInto("audit").values({ what: `create ${data.title}` }).execute();
            if (data.title === "forbidden") throw new RpcError("FORBIDDEN", { message: "Titles may not say forbidden" });
            return { ...data, slug: slugOf(data.title!) };
          },
          async afterCreate({ row, context }) {
            calls.push(["afterCreate", row.title]);
            if (row.title === "explode") throw new Error("the after hook exploded");
            await context.jobs.send("task.created", { id: row.id });
          },
          beforeUpdate({ before, data }) {
            calls.push(["beforeUpdate", before.status, data.status]);
            if (data.status === "archived" && before.status !== "done") throw new RpcError("BAD_REQUEST", { message: "Only a done task can be archived" });
          },
          afterUpdate({ before, row, actor }) {
            calls.push(["afterUpdate", before.status, row.status, actor.admin]);
          },
          beforeDelete({ row }) {
            calls.push(["beforeDelete", row.title]);
          },
          afterDelete({ row, actor }) {
            calls.push(["afterDelete", row.title, actor.admin]);
          },
        },
      })
      .openapi()
      .mcp()
      .admin({ ui: false });
    built = app.build();
    await built.migrator.migrateToLatest();
    alice = await signUp(built, "alice@example.test");
    bob = await signUp(built, "bob@example.test");
    admin = await signUp(built, "admin@example.test");
    await built.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  }, 90_000);

  afterAll(async () => {
    await built?.close();
    await database?.close();
    server?.close();
  });

  const audits = async () => (await built.db.selectFrom("audit").select("what").orderBy("id").execute()).map((row: { what: string }) => row.what);
  const tasks = async (title: string) => built.db.selectFrom("task").selectAll().where("title", "=", title).execute();
  const mcpCall = async (name: string, args: unknown, who: SignedIn) => {
    const response: Response = await built.handle(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...as(who) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      }),
    );
    return (await response.json()).result as { isError?: boolean; content: { text: string }[] };
  };

  it("a beforeCreate fills a column on RPC, REST and MCP, writing another table in the same transaction", async () => {
    const viaRpc = await rpc(built, "task.create", { title: "Hello World", slug: "client-value" }, as(alice));
    expect([viaRpc.status, viaRpc.body.slug, viaRpc.body.ownerId]).toEqual([200, "hello-world", alice.userId]);
    const viaRest = await request(built, "POST", "/rest/task", { headers: { "content-type": "application/json", ...as(alice) }, body: JSON.stringify({ title: "From REST" }) });
    expect([viaRest.status, viaRest.body.slug]).toEqual([200, "from-rest"]);
    const viaMcp = await mcpCall("task_create", { title: "From MCP" }, alice);
    expect(viaMcp.isError).toBeFalsy();
    expect(JSON.parse(viaMcp.content[0]!.text).slug).toBe("from-mcp");
    expect(await audits()).toEqual(expect.arrayContaining(["create Hello World", "create From REST", "create From MCP"]));
  });

  it("a refusing beforeCreate answers its status and message on RPC, REST and MCP, and writes nothing", async () => {
    const viaRpc = await rpc(built, "task.create", { title: "forbidden" }, as(alice));
    expect([viaRpc.status, viaRpc.body.code, viaRpc.body.message]).toEqual([403, "FORBIDDEN", "Titles may not say forbidden"]);
    const viaRest = await request(built, "POST", "/rest/task", { headers: { "content-type": "application/json", ...as(alice) }, body: JSON.stringify({ title: "forbidden" }) });
    expect([viaRest.status, viaRest.body.message]).toEqual([403, "Titles may not say forbidden"]);
    const viaMcp = await mcpCall("task_create", { title: "forbidden" }, alice);
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.content[0]!.text).toContain("Titles may not say forbidden");
    // The hook's own write rolled back with the refused insert.
    expect(await tasks("forbidden")).toEqual([]);
    expect(await audits()).not.toContain("create forbidden");
  });

  it("an afterCreate sends a job that sees the committed row; a rolled-back batch sends nothing", async () => {
    const created = await rpc(built, "task.create", { title: "Send a job" }, as(alice));
    expect(created.status).toBe(200);
    await waitFor("the job that read the created row", () => seenByJob.some((row: any) => row?.id === created.body.id));
    expect(seenByJob.find((row: any) => row?.id === created.body.id)).toMatchObject({ title: "Send a job", slug: "send-a-job" });
    const jobs = built.sealed.service("jobs");
    const queued = (await jobs.list({ queue: "task.created" })).length;
    const refused = await rpc(built, "task.batch", { create: [{ title: "kept back" }, { title: "forbidden" }] }, as(alice));
    expect([refused.status, refused.body.message]).toEqual([403, "create[1]: Titles may not say forbidden"]);
    expect(await tasks("kept back")).toEqual([]);
    // The first item's afterCreate never ran: its write rolled back, so no job was queued.
    expect(calls).not.toContainEqual(["afterCreate", "kept back"]);
    expect((await jobs.list({ queue: "task.created" })).length).toBe(queued);
  });

  it("a batch fires the hooks once per item: before* in its transaction, after* once it committed", async () => {
    calls.length = 0;
    const batch = await rpc(built, "task.batch", { create: [{ title: "One" }, { title: "Two" }, { title: "Three" }] }, as(alice));
    expect(batch.status).toBe(200);
    expect(batch.body.create.map((row: { slug: string }) => row.slug)).toEqual(["one", "two", "three"]);
    expect(calls).toEqual([
      ["beforeCreate", "One", false],
      ["beforeCreate", "Two", false],
      ["beforeCreate", "Three", false],
      ["afterCreate", "One"],
      ["afterCreate", "Two"],
      ["afterCreate", "Three"],
    ]);
  });

  it("_admin.data writes fire the hooks once per row, flagged as admin writes", async () => {
    calls.length = 0;
    const admin$ = (name: string, input: unknown) => rpc(built, `_admin.data.${name}`, input, as(admin));
    const created = await admin$("create", { table: "task", data: { title: "By Admin" } });
    expect([created.status, created.body.slug]).toEqual([200, "by-admin"]);
    await admin$("create", { table: "task", data: { title: "By Admin" } });
    const updated = await admin$("update", { table: "task", where: { title: "By Admin" }, data: { status: "done" } });
    expect([updated.status, updated.body.count]).toEqual([200, 2]);
    const refused = await admin$("update", { table: "task", where: { title: "By Admin" }, data: { status: "archived" } });
    expect(refused.status).toBe(200);
    const open = await admin$("create", { table: "task", data: { title: "Still open" } });
    const notDone = await admin$("update", { table: "task", where: { id: open.body.id }, data: { status: "archived" } });
    expect([notDone.status, notDone.body.message]).toEqual([400, "Only a done task can be archived"]);
    const removed = await admin$("delete", { table: "task", where: { id: created.body.id } });
    expect(removed.status).toBe(200);
    expect(calls.filter((call) => call[0] === "beforeCreate")).toEqual([["beforeCreate", "By Admin", true], ["beforeCreate", "By Admin", true], ["beforeCreate", "Still open", true]]);
    expect(calls.filter((call) => call[0] === "afterUpdate")).toEqual([
      ["afterUpdate", "open", "done", true],
      ["afterUpdate", "open", "done", true],
      ["afterUpdate", "done", "archived", true],
      ["afterUpdate", "done", "archived", true],
    ]);
    expect(calls.filter((call) => call[0] === "afterDelete")).toEqual([["afterDelete", "By Admin", true]]);
    expect(taskChanges().at(-1)).toMatchObject({ op: "delete", actor: { kind: "user", userId: admin.userId, admin: true } });
  });

  it("a failing after hook is reported to onError and the committed write still answers 200", async () => {
    reported.length = 0;
    const created = await rpc(built, "task.create", { title: "explode" }, as(alice));
    expect([created.status, created.body.slug]).toEqual([200, "explode"]);
    expect(await tasks("explode")).toHaveLength(1);
    expect(reported).toHaveLength(1);
    expect(String((reported[0] as Error).message)).toContain('resource "task": afterCreate hook failed: the after hook exploded');
  });

  it("changes carry the rows, the rows before and the actor, on the event and in a rows webhook", async () => {
    const created = await rpc(built, "task.create", { title: "Carry rows" }, as(alice));
    const updated = await rpc(built, "task.update", { where: { id: created.body.id }, data: { status: "done" } }, as(alice));
    expect(updated.status).toBe(200);
    const event = taskChanges().at(-1)!;
    expect(event).toMatchObject({ op: "update", keys: [created.body.id], rows: [{ status: "done" }], before: [{ status: "open", title: "Carry rows" }], actor: { kind: "user", userId: alice.userId, admin: false } });
    await waitFor("the update's delivery", () => received.some((r) => JSON.parse(r.body).type === "task.update" && JSON.parse(r.body).data.keys[0] === created.body.id));
    const delivery = received.find((r) => JSON.parse(r.body).type === "task.update" && JSON.parse(r.body).data.keys[0] === created.body.id)!;
    const payload = new Webhook(HOOK_SECRET).verify(delivery.body, delivery.headers) as any;
    expect(payload.data).toMatchObject({
      table: "task",
      op: "update",
      keys: [created.body.id],
      rows: [{ id: created.body.id, title: "Carry rows", slug: "carry-rows", status: "done", ownerId: alice.userId }],
      before: [{ status: "open" }],
      actor: { kind: "user", userId: alice.userId, admin: false },
    });
  });

  it("a refused write emits nothing: no change event, no webhook", async () => {
    const created = await rpc(built, "task.create", { title: "Alice's own" }, as(alice));
    const events = taskChanges().length;
    const deliveries = received.length;
    // A non-owner's update and delete, a missing row, and a beforeUpdate refusal: all refused.
    expect((await rpc(built, "task.update", { where: { id: created.body.id }, data: { status: "done" } }, as(bob))).status).toBe(404);
    expect((await rpc(built, "task.delete", { where: { id: created.body.id } }, as(bob))).status).toBe(404);
    expect((await rpc(built, "task.update", { where: { id: 999_999 }, data: { status: "done" } }, as(alice))).status).toBe(404);
    expect((await rpc(built, "task.update", { where: { id: created.body.id }, data: { status: "archived" } }, as(alice))).status).toBe(400);
    expect(taskChanges().length).toBe(events);
    // A write that does change something afterwards is delivered alone.
    await rpc(built, "task.update", { where: { id: created.body.id }, data: { status: "done" } }, as(alice));
    expect(taskChanges().length).toBe(events + 1);
    const updates = () => received.slice(deliveries).map((r) => JSON.parse(r.body)).filter((body) => body.type === "task.update");
    await waitFor("the one real update's delivery", () => updates().length > 0);
    expect(updates()).toEqual([expect.objectContaining({ data: expect.objectContaining({ keys: [created.body.id], rows: [expect.objectContaining({ status: "done" })] }) })]);
  });

  it("a non-owner's refused update on a resource without hooks delivers no webhook (it delivered one with no keys)", async () => {
    const note = await rpc(built, "note.create", { body: "mine" }, as(alice));
    expect(note.status).toBe(200);
    const noteEvents = () => changes.filter((change) => change.table === "note");
    const events = noteEvents().length;
    const deliveries = received.length;
    expect((await rpc(built, "note.update", { where: { id: note.body.id }, data: { body: "theirs" } }, as(bob))).status).toBe(404);
    expect((await rpc(built, "note.delete", { where: { id: note.body.id } }, as(bob))).status).toBe(404);
    expect(noteEvents().length).toBe(events);
    await rpc(built, "note.update", { where: { id: note.body.id }, data: { body: "still mine" } }, as(alice));
    const notes = () => received.slice(deliveries).map((r) => JSON.parse(r.body)).filter((body) => body.type.startsWith("note.") && body.type !== "note.insert");
    await waitFor("the owner's update delivery", () => notes().length > 0);
    expect(notes()).toEqual([expect.objectContaining({ type: "note.update", data: { table: "note", op: "update", keys: [note.body.id] } })]);
  });
});

describe("resource hooks on SQLite (no jobs there)", () => {
  it("a beforeCreate's own write commits or rolls back with the insert; update and delete hooks see the row", async () => {
    const seen: unknown[] = [];
    const built: any = new App({ db: sqliteMemory(), onError: () => undefined })
      .schema(v1)
      .resource("audit")
      .resource("task", {
        hooks: {
          async beforeCreate({ data, trx }) {
            await trx.insertInto("audit").values({ what: `create ${data.title}` }).execute();
            if (data.title === "forbidden") throw new RpcError("FORBIDDEN", { message: "Titles may not say forbidden" });
            return { ...data, slug: slugOf(data.title!) };
          },
          beforeUpdate: ({ before, data }) => void seen.push(["beforeUpdate", before.title, data.status]),
          afterDelete: ({ row, actor }) => void seen.push(["afterDelete", row.slug, actor.kind]),
        },
      })
      .build();
    await built.migrator.migrateToLatest();
    try {
      const created = await rpc(built, "task.create", { title: "On SQLite" });
      expect([created.status, created.body.slug]).toEqual([200, "on-sqlite"]);
      const refused = await rpc(built, "task.create", { title: "forbidden" });
      expect([refused.status, refused.body.message]).toEqual([403, "Titles may not say forbidden"]);
      expect((await rpc(built, "audit.list", {})).body.map((row: { what: string }) => row.what)).toEqual(["create On SQLite"]);
      expect((await rpc(built, "task.update", { where: { id: created.body.id }, data: { status: "done" } })).status).toBe(200);
      expect((await rpc(built, "task.delete", { where: { id: created.body.id } })).status).toBe(200);
      expect(seen).toEqual([["beforeUpdate", "On SQLite", "done"], ["afterDelete", "on-sqlite", "anonymous"]]);
    } finally {
      await built.close();
    }
  });
});

describe("resource hooks at the .resource() call", () => {
  it("refuses an unknown hook name or a hook that is not a function, naming it", () => {
    const app = () => new App({ db: sqliteMemory() }).schema(v1);
    expect(() => app().resource("task", { hooks: { beforeList: () => undefined } as never })).toThrow(expect.objectContaining({ code: "RESOURCE_HOOKS_INVALID", message: expect.stringContaining("beforeList") }));
    expect(() => app().resource("task", { hooks: { afterCreate: "send" } as never })).toThrow(expect.objectContaining({ code: "RESOURCE_HOOKS_INVALID" }));
  });
});
