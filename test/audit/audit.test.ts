// The audit log through the front door, on every database family: who wrote, through which surface,
// what changed; nothing for a rolled-back write; secrets redacted; restore; retention.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App, RpcError, mcp } from "../../presets/trellis.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { testApp } from "../../presets/testing.js";
import type { DatabaseConfig } from "../../kernel/index.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), views: t.integer().default(0), published: t.boolean().default(false), ...timestamps(t) }))
  .table("token", (t) => ({ id: t.serial().primaryKey(), label: t.text(), value: t.text().secret() }))
  .table("scratch", (t) => ({ id: t.serial().primaryKey(), note: t.text() }))
  .build();
const METRICS_TOKEN = "a-metrics-token-long-enough";
/** Unexpected failures reported to onError: none may happen (a sweep before the table exists was one). */
const failures: unknown[] = [];
const PUBLIC = { list: "public", get: "public", create: "public", update: "public", delete: "public" } as const;
const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

function createApp(db: DatabaseConfig) {
  return new App({ baseUrl: ORIGIN, db, onError: (error) => failures.push(error), telemetry: { metrics: { token: METRICS_TOKEN } } })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("post", { permissions: PUBLIC })
    .resource("token", { permissions: PUBLIC })
    .audit({ exclude: ["scratch"], retain: "1d" })
    .procedure("post.failing", (base) =>
      base.input(z.object({ title: z.string() })).handler(async ({ input, context }) => {
        await context.db.transact(async (trx) => {
          await trx.insertInto("post").values({ title: input.title }).execute();
          throw new RpcError("CONFLICT", { message: "rolled back on purpose" });
        });
      }),
    )
    .procedure("post.rawRename", (base) =>
      base.input(z.object({ id: z.number(), title: z.string() })).handler(async ({ input, context }) => {
        await sql`update post set title = ${input.title} where id = ${input.id}`.execute(context.db);
        return "ok";
      }),
    )
    .procedure("post.tool", (base) =>
      base
        .meta(mcp.tool())
        .input(z.object({ title: z.string() }))
        .handler(async ({ input, context }) => (await context.db.insertInto("post").values({ title: input.title }).returning("id").executeTakeFirstOrThrow()).id),
    )
    .procedure("audit.sweep", (base) => base.handler(({ context }) => context.audit.sweep()))
    .openapi()
    .mcp()
    .admin();
}

describe.each(families())("audit log on %s", (family) => {
  let db: TestDatabase | undefined;
  let kind: DatabaseConfig["kind"];
  let admin: SignedIn;
  let alice: SignedIn;
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  const as = (who: SignedIn) => ({ cookie: who.cookie });
  const entries = async (input: Record<string, unknown>) => {
    const { status, body } = await rpc(app, "_admin.audit.list", input, as(admin));
    expect(status).toBe(200);
    return body.entries as any[];
  };

  beforeAll(async () => {
    // The embedded database from the test kit's pool (a migrated copy, no fresh start); the others their own.
    if (family === "pglite") {
      const t = await testApp((input) => createApp(input.db));
      app = t.app as never;
      kind = "postgres";
    } else {
      db = await openDatabase(family);
      kind = db.kind;
      app = await createApp({ dialect: db.dialect, kind: db.kind }).start();
    }
    admin = await signUp(app, "admin@example.test");
    // A write outside any request: the system's.
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    alice = await signUp(app, "alice@example.test");
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("records a create, an update and a delete through RPC with the user, the request id and the columns", async () => {
    const created = await rpc(app, "post.create", { title: "first" }, { ...as(alice), "x-request-id": "req-create-1" });
    expect(created.status).toBe(200);
    const id = created.body.id;
    expect((await rpc(app, "post.update", { where: { id }, data: { title: "second", views: 3 } }, as(alice))).status).toBe(200);
    expect((await rpc(app, "post.delete", { where: { id } }, as(alice))).status).toBe(200);

    const list = await entries({ table: "post", key: String(id) });
    expect(list.map((entry) => entry.op)).toEqual(["delete", "update", "insert"]);
    const [deleted, updated, inserted] = list;
    expect(inserted).toMatchObject({ table: "post", key: String(id), source: "rpc", requestId: "req-create-1", actor: { kind: "user", userId: alice.userId, impersonatorId: null }, before: null });
    expect(inserted.after).toMatchObject({ id, title: "first", views: 0 });
    expect(inserted.changed).toEqual(expect.arrayContaining(["id", "title", "views", "published"]));
    expect(updated.changed.sort()).toEqual(["title", "updatedAt", "views"].filter((c) => updated.changed.includes(c)).sort());
    expect(updated.changed).toEqual(expect.arrayContaining(["title", "views"]));
    expect(updated.changed).not.toContain("published");
    expect(updated.before).toMatchObject({ title: "first", views: 0 });
    expect(updated.after).toMatchObject({ title: "second", views: 3 });
    expect(deleted).toMatchObject({ after: null, actor: { kind: "user", userId: alice.userId } });
    expect(deleted.before).toMatchObject({ title: "second" });
  });

  it("writes nothing for a rolled-back transaction", async () => {
    const before = await entries({ table: "post", take: 200 });
    const failed = await rpc(app, "post.failing", { title: "never" }, as(alice));
    expect(failed.status).toBe(409);
    const after = await entries({ table: "post", take: 200 });
    expect(after.length).toBe(before.length);
    expect(await app.db.selectFrom("post").select("id").where("title", "=", "never").execute()).toEqual([]);
  });

  it("attributes raw SQL through context.db, REST, MCP and _admin.data to their caller and surface", async () => {
    const { body: post } = await rpc(app, "post.create", { title: "raw" }, as(alice));
    expect((await rpc(app, "post.rawRename", { id: post.id, title: "renamed raw" }, as(alice))).status).toBe(200);
    const [raw] = await entries({ table: "post", key: String(post.id), op: "update" });
    expect(raw).toMatchObject({ source: "rpc", actor: { kind: "user", userId: alice.userId }, before: { title: "raw" }, after: { title: "renamed raw" } });

    const rest = await request(app, "PATCH", `/rest/post/${post.id}`, { headers: { "content-type": "application/json", ...as(alice) }, body: JSON.stringify({ title: "via rest" }) });
    expect(rest.status).toBe(200);
    const [viaRest] = await entries({ table: "post", key: String(post.id), op: "update" });
    expect(viaRest).toMatchObject({ source: "rest", actor: { kind: "user", userId: alice.userId }, after: { title: "via rest" } });

    const call = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers: { ...mcpHeaders, ...as(alice) }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "post_tool", arguments: { title: "via mcp" } } }) }));
    expect(call.status).toBe(200);
    const [viaMcp] = await entries({ table: "post", op: "insert", take: 1 });
    expect(viaMcp).toMatchObject({ source: "mcp", actor: { kind: "user", userId: alice.userId }, after: { title: "via mcp" } });

    const viaAdmin = await rpc(app, "_admin.data.update", { table: "post", where: { id: post.id }, data: { title: "via admin" } }, as(admin));
    expect(viaAdmin.status).toBe(200);
    const [adminEntry] = await entries({ table: "post", key: String(post.id), op: "update" });
    expect(adminEntry).toMatchObject({ source: "admin", actor: { kind: "user", userId: admin.userId }, after: { title: "via admin" } });
  });

  it("records a batch's writes under its one request, and nothing of a batch rolled back", async () => {
    const { body: post } = await rpc(app, "post.create", { title: "batched" }, as(alice));
    const done = await rpc(app, "post.batch", { create: [{ title: "b1" }, { title: "b2" }], update: [{ where: { id: post.id }, data: { title: "batched 2" } }] }, { ...as(alice), "x-request-id": "req-batch-1" });
    expect(done.status).toBe(200);
    const batched = (await entries({ table: "post", take: 10 })).filter((entry) => entry.requestId === "req-batch-1");
    expect(batched.map((entry) => entry.op).sort()).toEqual(["insert", "insert", "update"]);
    expect(batched.every((entry) => entry.source === "rpc" && entry.actor.userId === alice.userId)).toBe(true);

    const count = (await entries({ table: "post", take: 200 })).length;
    const refused = await rpc(app, "post.batch", { create: [{ title: "ghost" }], update: [{ where: { id: 999_999 }, data: { title: "nobody" } }] }, as(alice));
    expect(refused.status).toBe(404);
    expect((await entries({ table: "post", take: 200 })).length).toBe(count);
  });

  it("records an in-process client() call as its caller's, from the client", async () => {
    const created = await (app.client({ cookie: alice.cookie }) as any).post.create({ title: "in process" });
    const [entry] = await entries({ table: "post", key: String(created.id) });
    expect(entry).toMatchObject({ source: "client", actor: { kind: "user", userId: alice.userId } });
  });

  it("records writes outside any request as the system's, and anonymous callers as anonymous", async () => {
    const [system] = await entries({ table: "user", key: admin.userId, op: "update" });
    expect(system).toMatchObject({ actor: { kind: "system", userId: null }, source: null, requestId: null, changed: expect.arrayContaining(["role"]) });
    const { body } = await rpc(app, "post.create", { title: "anonymous" });
    const [anonymous] = await entries({ table: "post", key: String(body.id) });
    expect(anonymous.actor).toEqual({ kind: "anonymous", userId: null, impersonatorId: null });
  });

  it("redacts the auth tables' credentials and .secret() columns, yet shows them changed", async () => {
    // Signing up is anonymous: the account is found by its user.
    const account = (await entries({ table: "account", take: 200 })).find((entry) => entry.after?.userId === alice.userId);
    expect(account).toMatchObject({ op: "insert", source: "auth", actor: { kind: "anonymous" } });
    expect(account.after.password).toBe("[redacted]");
    const { body: token } = await rpc(app, "token.create", { label: "ci", value: "s3cr3t-value" }, as(alice));
    await rpc(app, "token.update", { where: { id: token.id }, data: { value: "another-s3cr3t" } }, as(alice));
    const [updated, created] = await entries({ table: "token", key: String(token.id) });
    expect(created.after).toEqual(expect.objectContaining({ label: "ci", value: "[redacted]" }));
    expect(updated.changed).toEqual(["value"]);
    expect(updated.before.value).toBe("[redacted]");
    expect(JSON.stringify(await entries({ table: "token" }))).not.toContain("s3cr3t");
  });

  it("leaves excluded tables and no-op updates out", async () => {
    await app.db.insertInto("scratch").values({ note: "x" }).execute();
    expect((await rpc(app, "_admin.audit.list", { table: "scratch" }, as(admin))).body.message).toMatch(/"scratch" is not audited/);
    const { body: post } = await rpc(app, "post.create", { title: "same" }, as(alice));
    await sql`update post set title = title where id = ${post.id}`.execute(app.db);
    expect((await entries({ table: "post", key: String(post.id) })).map((entry) => entry.op)).toEqual(["insert"]);
  });

  it("restores a row to an earlier version, and undoes a delete; each restore is itself audited", async () => {
    const { body: post } = await rpc(app, "post.create", { title: "v1", views: 1 }, as(alice));
    await rpc(app, "post.update", { where: { id: post.id }, data: { title: "v2", views: 2, published: true } }, as(alice));
    const [, first] = await entries({ table: "post", key: String(post.id) });
    const restored = await rpc(app, "_admin.audit.restore", { id: first.id }, as(admin));
    expect(restored.status).toBe(200);
    expect(restored.body.row).toMatchObject({ id: post.id, title: "v1", views: 1, published: false });
    expect((await rpc(app, "post.get", { where: { id: post.id } })).body).toMatchObject({ title: "v1", views: 1, published: false });
    const [restoreEntry] = await entries({ table: "post", key: String(post.id) });
    expect(restoreEntry).toMatchObject({ op: "update", source: "admin", actor: { kind: "user", userId: admin.userId }, after: { title: "v1" } });

    await rpc(app, "post.delete", { where: { id: post.id } }, as(alice));
    const [deletion] = await entries({ table: "post", key: String(post.id), op: "delete" });
    expect((await rpc(app, "_admin.audit.restore", { id: deletion.id }, as(admin))).status).toBe(200);
    expect((await rpc(app, "post.get", { where: { id: post.id } })).body).toMatchObject({ title: "v1" });
    expect((await entries({ table: "post", key: String(post.id), take: 1 }))[0]).toMatchObject({ op: "insert", source: "admin" });
  });

  it("pages by cursor, filters by time, exports JSON Lines, and answers bad input and non-admins", async () => {
    const first = await rpc(app, "_admin.audit.list", { take: 2 }, as(admin));
    expect(first.body.entries).toHaveLength(2);
    const second = await rpc(app, "_admin.audit.list", { take: 2, cursor: first.body.nextCursor }, as(admin));
    expect(BigInt(second.body.entries[0].id)).toBeLessThan(BigInt(first.body.entries[1].id));
    expect((await entries({ from: new Date(Date.now() + 60_000).toISOString() }))).toEqual([]);
    expect((await entries({ to: new Date(0).toISOString() }))).toEqual([]);

    const exported = await app.handle(new Request("http://localhost/_admin/audit/export?table=post&op=insert", { headers: as(admin) }));
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    const lines = (await exported.text()).trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.every((line) => line.table === "post" && line.op === "insert")).toBe(true);
    expect((await request(app, "GET", `/_admin/audit/export?table=post`, {})).status).toBe(401);
    expect((await request(app, "GET", `/_admin/audit/export?nope=1`, { headers: as(admin) })).status).toBe(400);

    expect((await rpc(app, "_admin.audit.list", { cursor: "abc" }, as(admin))).status).toBe(400);
    expect((await rpc(app, "_admin.audit.restore", { id: "999999999" }, as(admin))).status).toBe(404);
    expect((await rpc(app, "_admin.audit.list", {}, as(alice))).status).toBe(403);
    expect((await rpc(app, "_admin.audit.list", {})).status).toBe(401);
  });

  it("counts entries written at /metrics", async () => {
    await rpc(app, "post.create", { title: "counted" }, as(alice));
    const response = await app.handle(new Request("http://localhost/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }));
    const text = await response.text();
    const count = Number(/trellis_audit_entries_total\{table="post",op="insert"\} (\d+)/.exec(text)?.[1]);
    expect(count).toBeGreaterThan(0);
    await rpc(app, "post.create", { title: "counted again" }, as(alice));
    const again = await (await app.handle(new Request("http://localhost/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))).text();
    expect(Number(/trellis_audit_entries_total\{table="post",op="insert"\} (\d+)/.exec(again)?.[1])).toBe(count + 1);
  });

  it("deletes entries older than retain", async () => {
    const { body: post } = await rpc(app, "post.create", { title: "old" }, as(alice));
    const stale = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await sql`update trellis_audit set at = ${stale} where table_name = 'post' and row_key = ${String(post.id)}`.execute(app.db);
    const fresh = (await entries({ take: 200 })).length;
    const swept = await rpc(app, "audit.sweep", undefined, as(alice));
    expect(swept.body).toBe(1);
    expect(await entries({ table: "post", key: String(post.id) })).toEqual([]);
    expect((await entries({ take: 200 })).length).toBe(fresh - 1);
  });

  it("reported no unexpected failure", () => {
    expect(failures).toEqual([]);
  });
});
