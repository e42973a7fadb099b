// A resource's `history` option: `{name}.history` pages the audit entries of one row to whoever may
// `get` it, through the typed client, RPC and REST, on every database family. A caller who may not
// read the row gets what `get` gives them; a tenant's rows keep their history to the organization;
// entries of other rows (a key used again included) never appear; secrets stay redacted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type RouterOf, type TestApp, type TestAppInput } from "../../presets/testing.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { errorOf, request, rpc, sqliteMemory } from "../support/app.js";

const ORIGIN = "http://localhost:3000";
const v1 = schema("1")
  .auth({ organizations: true })
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    authorId: t.text(),
    title: t.text(),
    body: t.text().default(""),
    apiToken: t.text().nullable().secret(),
    deletedAt: t.timestamp().nullable(),
  }))
  .table("memo", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id", { onDelete: "cascade" }), title: t.text() }))
  .build();

const OWNER = { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } as const;

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: ORIGIN, onError: () => {} })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .resource("post", { ownerColumn: "authorId", permissions: OWNER, softDelete: true, history: true })
    // Readable by administrators only, and never a memo titled "sealed" (a function's 403).
    .resource("memo", { permissions: { list: "admin", get: ({ context, row }) => context.user?.role === "admin" && row?.title !== "sealed", create: "admin", update: "admin", delete: "admin" }, history: true })
    .resource("task", { tenant: "orgId", history: true })
    .audit()
    .admin()
    .openapi();
}

type Router = RouterOf<typeof createApp>;
const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
/** The status a typed call answers: 200, or its error's. */
const status = (call: Promise<unknown>) => call.then(() => 200, (error: { status: number }) => error.status);

describe.each(families())("a row's history on %s", (family) => {
  let database: TestDatabase | undefined;
  let t: TestApp<typeof createApp>;
  let admin: Actor<Router>;
  let ada: Actor<Router>;
  let bea: Actor<Router>;
  /** `_admin.audit.list` of one row: what the history must equal, entry for entry. */
  const adminList = async (table: string, key: unknown) => {
    const { status, body } = await rpc(t.app, "_admin.audit.list", { table, key: String(key) }, admin.headers);
    expect(status).toBe(200);
    return body.entries as unknown[];
  };

  beforeAll(async () => {
    // The embedded database from the test kit's pool; the others a database of their own.
    if (family === "pglite") t = await testApp(createApp);
    else {
      database = await openDatabase(family);
      t = await testApp(createApp({ db: { dialect: database.dialect, kind: database.kind }, secret: "a-test-secret-that-is-long-enough-0123456789" }));
    }
    admin = await t.asAdmin();
    ada = await t.signUp();
    bea = await t.signUp();
  });
  afterAll(async () => {
    await t?.close();
    await database?.close();
  });

  it("shows the owner their row's insert, updates with the changed columns, soft delete and restore, newest first", async () => {
    const post = await ada.client.post.create({ title: "draft", body: "hello" });
    await ada.client.post.update({ where: { id: post.id }, data: { title: "final" } });
    await ada.client.post.update({ where: { id: post.id }, data: { body: "hello, world" } });

    const page = await ada.client.post.history({ where: { id: post.id } });
    expect(page.nextCursor).toBeNull();
    expect(page.entries.map((entry) => entry.op)).toEqual(["update", "update", "insert"]);
    const [second, first, inserted] = page.entries;
    expect(inserted).toMatchObject({ table: "post", key: String(post.id), op: "insert", source: "client", actor: { kind: "user", userId: ada.user.id, impersonatorId: null }, before: null });
    expect(inserted!.after).toMatchObject({ id: post.id, authorId: ada.user.id, title: "draft", body: "hello" });
    expect(first).toMatchObject({ changed: ["title"], before: { title: "draft" }, after: { title: "final" } });
    expect(second).toMatchObject({ changed: ["body"], before: { body: "hello" }, after: { body: "hello, world" } });
    // The entry shape is `_admin.audit.list`'s, entry for entry.
    expect(page.entries).toEqual(await adminList("post", post.id));

    // Soft-deleted, the row is gone for get, and so is its history; restored, both come back.
    await ada.client.post.delete({ where: { id: post.id } });
    expect(await status(ada.client.post.get({ where: { id: post.id } }))).toBe(404);
    expect(await status(ada.client.post.history({ where: { id: post.id } }))).toBe(404);
    await ada.client.post.restore({ where: { id: post.id } });
    const after = await ada.client.post.history({ where: { id: post.id } });
    // (PostgreSQL's JSON keeps an insert's columns in an order of its own: compared sorted.)
    expect(after.entries.map((entry) => [entry.op, [...entry.changed].sort()])).toEqual([
      ["update", ["deletedAt"]],
      ["update", ["deletedAt"]],
      ["update", ["body"]],
      ["update", ["title"]],
      ["insert", ["apiToken", "authorId", "body", "deletedAt", "id", "title"]],
    ]);
    expect(after.entries[1]!.after!.deletedAt).not.toBeNull();
    expect(after.entries[0]!.after!.deletedAt).toBeNull();
  });

  it("answers every other caller exactly what get answers them", async () => {
    const post = await ada.client.post.create({ title: "mine" });
    const where = { where: { id: post.id } };
    // Another user: the row is not theirs (404); signed out: 401; a row that does not exist: 404.
    for (const [who, expected] of [[bea, 404], [t.anonymous, 401], [admin, 404]] as const) {
      expect(await status(who.client.post.get(where))).toBe(expected);
      expect(await status(who.client.post.history(where))).toBe(expected);
    }
    expect(await status(ada.client.post.history({ where: { id: 999_999 } }))).toBe(404);

    // A function rule: 403 when it says no (signed out too: it needs no session), 404 for a missing row.
    const memo = await admin.client.memo.create({ title: "open" });
    const sealed = await admin.client.memo.create({ title: "sealed" });
    for (const [who, key, expected] of [[ada, memo.id, 403], [t.anonymous, memo.id, 403], [admin, sealed.id, 403], [admin, 999_999, 404], [admin, memo.id, 200]] as const) {
      expect(await status(who.client.memo.get({ where: { id: key } }))).toBe(expected);
      expect(await status(who.client.memo.history({ where: { id: key } }))).toBe(expected);
    }
    // The refusal is get's, message and all.
    const refused = await rpc(t.app, "post.history", where, bea.headers);
    expect(refused.body).toEqual((await rpc(t.app, "post.get", where, bea.headers)).body);
  });

  it("keeps a tenant row's history to its organization", async () => {
    const create = async (who: Actor<Router>, slug: string) => {
      const response = await who.fetch("/api/auth/organization/create", json({ name: slug, slug: `${slug}-${family}` }));
      expect(response.status).toBe(200);
      return ((await response.json()) as { id: string }).id;
    };
    const orgA = await create(ada, "acme");
    const orgB = await create(bea, "globex");
    const task = await ada.client.task.create({ title: "ship" });
    await ada.client.task.update({ where: { id: task.id }, data: { title: "ship it" } });
    const other = await bea.client.task.create({ title: "theirs" });

    const page = await ada.client.task.history({ where: { id: task.id } });
    expect(page.entries.map((entry) => [entry.op, entry.organizationId, entry.actor.userId])).toEqual([
      ["update", orgA, ada.user.id],
      ["insert", orgA, ada.user.id],
    ]);
    // Another organization's row is a missing row, for get and history alike.
    expect(await status(bea.client.task.get({ where: { id: task.id } }))).toBe(404);
    expect(await status(bea.client.task.history({ where: { id: task.id } }))).toBe(404);
    expect(await status(ada.client.task.history({ where: { id: other.id } }))).toBe(404);
    // The same member, switched to another organization, no longer reads it either.
    const orgC = await create(ada, "initech");
    expect((await ada.fetch("/api/auth/organization/set-active", json({ organizationId: orgC }))).status).toBe(200);
    expect(await status(ada.client.task.history({ where: { id: task.id } }))).toBe(404);
    expect((await ada.fetch("/api/auth/organization/set-active", json({ organizationId: orgA }))).status).toBe(200);
    expect((await ada.client.task.history({ where: { id: task.id } })).entries).toHaveLength(2);
    expect(orgB).not.toBe(orgA);
  });

  it("never shows another row's entries, nor those of an earlier row under the same key", async () => {
    const one = await admin.client.memo.create({ title: "one" });
    const two = await admin.client.memo.create({ title: "two" });
    await admin.client.memo.update({ where: { id: two.id }, data: { title: "two, again" } });
    const ofOne = await admin.client.memo.history({ where: { id: one.id } });
    expect(ofOne.entries.map((entry) => [entry.op, entry.key])).toEqual([["insert", String(one.id)]]);

    // The key deleted and inserted again names another row: its history starts at that insert.
    await admin.client.memo.delete({ where: { id: two.id } });
    await t.app.db.insertInto("memo").values({ id: two.id, title: "another" }).execute();
    const ofNew = await admin.client.memo.history({ where: { id: two.id } });
    expect(ofNew.entries).toHaveLength(1);
    expect(ofNew.entries[0]).toMatchObject({ op: "insert", actor: { kind: "system" }, after: { title: "another" } });
    expect(JSON.stringify(ofNew)).not.toContain("two, again");
  });

  it("keeps secret columns redacted, yet shows them changed", async () => {
    const post = await ada.client.post.create({ title: "keyed", apiToken: "tok-s3cret-1" });
    await ada.client.post.update({ where: { id: post.id }, data: { apiToken: "tok-s3cret-2" } });
    const { entries } = await ada.client.post.history({ where: { id: post.id } });
    expect(entries[0]).toMatchObject({ changed: ["apiToken"], before: { apiToken: "[redacted]" }, after: { apiToken: "[redacted]" } });
    expect(entries[1]!.after!.apiToken).toBe("[redacted]");
    expect(JSON.stringify(entries)).not.toContain("s3cret");
  });

  it("pages by cursor, refuses bad input, and answers on REST and in the OpenAPI document", async () => {
    const post = await ada.client.post.create({ title: "v0" });
    for (let i = 1; i <= 4; i++) await ada.client.post.update({ where: { id: post.id }, data: { title: `v${i}` } });
    const first = await ada.client.post.history({ where: { id: post.id }, take: 2 });
    expect(first.entries.map((entry) => entry.after!.title)).toEqual(["v4", "v3"]);
    const second = await ada.client.post.history({ where: { id: post.id }, take: 2, cursor: first.nextCursor! });
    expect(second.entries.map((entry) => entry.after!.title)).toEqual(["v2", "v1"]);
    const last = await ada.client.post.history({ where: { id: post.id }, take: 2, cursor: second.nextCursor! });
    expect(last.entries.map((entry) => entry.op)).toEqual(["insert"]);
    expect(last.nextCursor).toBeNull();

    expect((await rpc(t.app, "post.history", { where: { id: post.id }, cursor: "abc" }, ada.headers)).status).toBe(400);
    expect((await rpc(t.app, "post.history", { where: { id: post.id }, take: 0 }, ada.headers)).status).toBe(400);
    expect((await rpc(t.app, "post.history", { where: { id: post.id }, take: 201 }, ada.headers)).status).toBe(400);
    // Signed out is 401 before the input is looked at, as for get.
    expect((await rpc(t.app, "post.history", { where: { id: "nope" } })).status).toBe(401);

    const rest = await request(t.app, "POST", "/rest/post/history", { headers: { "content-type": "application/json", cookie: ada.headers.get("cookie")! }, body: JSON.stringify({ where: { id: post.id }, take: 2 }) });
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual(first);
    expect((await request(t.app, "POST", "/rest/post/history", { headers: { "content-type": "application/json", cookie: bea.headers.get("cookie")! }, body: JSON.stringify({ where: { id: post.id } }) })).status).toBe(404);
    const document = (await request(t.app, "GET", "/openapi.json")).body as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/post/history", "/memo/history", "/task/history"]));
  });
});

describe("the history option's build checks", () => {
  const SECRET = "a-test-secret-that-is-long-enough-0123456789";
  it("needs .audit(), and the table audited", () => {
    const without = errorOf(() => new App({ db: sqliteMemory() }).schema(v1).auth({ secret: SECRET }).resource("memo", { history: true }).build());
    expect(without).toMatchObject({ code: "RESOURCE_HISTORY_NOT_AUDITED", message: 'Resource "memo" has history: true, which reads the audit log: add .audit() to the app' });
    const excluded = errorOf(() => new App({ db: sqliteMemory() }).schema(v1).auth({ secret: SECRET }).resource("memo", { history: true }).audit({ exclude: ["memo"] }).build());
    expect(excluded).toMatchObject({ code: "RESOURCE_HISTORY_NOT_AUDITED", message: 'Resource "memo" has history: true, but .audit() does not record table "memo": take it out of exclude (or name it in tables)' });
  });
});
