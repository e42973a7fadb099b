import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { errorOf, rpc, sqliteMemory } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { adminApp } from "./fixture.js";

describe.each(families())("the _admin API on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof adminApp>["start"]>>;
  let admin: SignedIn;
  let alice: SignedIn;
  const as = (who: SignedIn | null): HeadersInit => (who ? { cookie: who.cookie } : {});
  const call = (name: string, input?: unknown, who: SignedIn | null = admin) => rpc(app, `_admin.${name}`, input, as(who));

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await adminApp({ dialect: db.dialect, kind: db.kind }).start();
    admin = await signUp(app, "admin@example.test");
    alice = await signUp(app, "alice@example.test");
    await app.db.updateTable("user").set({ role: "user,admin" }).where("id", "=", admin.userId).execute();
    await app.db
      .insertInto("post")
      .values(Array.from({ length: 60 }, (_, i) => ({ title: `post ${String(i).padStart(2, "0")}`, views: i, authorId: i % 2 ? alice.userId : admin.userId })))
      .execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("answers 401 signed out and 403 without an admin role, before validating input", async () => {
    for (const [name, input] of [["meta", undefined], ["migrations", undefined], ["data.list", { table: "post" }], ["data.list", { table: "nope" }], ["data.create", { table: "post", data: {} }]] as const) {
      expect((await call(name, input, null)).status).toBe(401);
      const refused = await call(name, input, alice);
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe("Requires one of the roles: admin");
    }
  });

  it("meta: name, kind, versions, tables with columns, keys, relations and counts, resources and surfaces", async () => {
    const { status, body } = await call("meta");
    expect(status).toBe(200);
    expect(body).toMatchObject({ name: "Admin Test", kind: db.kind, versions: ["1", "2"] });
    const post = body.tables.find((table: any) => table.name === "post");
    expect(post).toMatchObject({ primaryKey: "id", rows: 60, writable: true });
    expect(post.columns.map((column: any) => column.name)).toEqual(["id", "title", "body", "views", "authorId", "published"]);
    expect(post.columns[0]).toMatchObject({ type: "serial", primaryKey: true, readonly: true, secret: false });
    expect(post.columns[4]).toMatchObject({ type: "text", nullable: true, references: { table: "user", column: "id" } });
    expect(post.relations).toEqual([{ name: "author", kind: "belongsTo", target: "user", from: "authorId", to: "id" }]);
    const session = body.tables.find((table: any) => table.name === "session");
    expect(session.writable).toBe(false);
    expect(session.columns.find((column: any) => column.name === "token").secret).toBe(true);
    // What the schema declares, foreign-key actions included; a plain reference carries none.
    expect(session.columns.find((column: any) => column.name === "userId").references).toEqual({ table: "user", column: "id", onDelete: "cascade" });
    expect(post.columns[4].references).toEqual({ table: "user", column: "id" });
    expect(body.tables.find((table: any) => table.name === "account").columns.filter((c: any) => c.secret).map((c: any) => c.name)).toEqual([
      "accessToken",
      "refreshToken",
      "idToken",
      "password",
    ]);
    expect(body.resources).toEqual([
      {
        name: "post",
        table: "post",
        permissions: { list: "public", get: "public", create: "authenticated", update: "authenticated", delete: "admin" },
        procedures: { list: "post.list", get: "post.get", create: "post.create", update: "post.update", delete: "post.delete" },
        ownerColumn: null,
        tenant: null,
        includable: [],
      },
    ]);
    expect(body.surfaces).toMatchObject({ rpc: true, auth: true, resources: true, health: true, dashboard: true });
  });

  it("migrations: name, version, when each ran and the checksum of its definition", async () => {
    const { status, body } = await call("migrations");
    expect(status).toBe(200);
    expect(body.map((m: any) => [m.name, m.version])).toEqual([
      ["0001_1", "1"],
      ["0002_2", "2"],
    ]);
    expect(new Date(body[0].executedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(body.map((m: any) => m.checksum)).toEqual([expect.stringMatching(/^[0-9a-f]{16,}$/), expect.stringMatching(/^[0-9a-f]{16,}$/)]);
    expect(body[0].checksum).not.toBe(body[1].checksum);
  });

  it("data.list pages by the admin listLimit: 50 by default, at most 200, skip capped", async () => {
    const page = await call("data.list", { table: "post" });
    expect(page.status).toBe(200);
    expect(page.body.count).toBe(60);
    expect(page.body.data).toHaveLength(50);
    expect((await call("data.list", { table: "post", take: 200 })).body.data).toHaveLength(60);
    const tooMany = await call("data.list", { table: "post", take: 201 });
    expect([tooMany.status, tooMany.body.message]).toEqual([400, "take must be at most 200"]);
    const deep = await call("data.list", { table: "post", skip: 100_001 });
    expect([deep.status, deep.body.message]).toEqual([400, "skip must be at most 100000"]);
  });

  it("data.list filters, sorts and counts the filtered rows", async () => {
    const { status, body } = await call("data.list", { table: "post", where: { views: { gte: 50 }, title: { startsWith: "post" } }, orderBy: [{ views: "desc" }], take: 3, skip: 1 });
    expect(status).toBe(200);
    expect(body.count).toBe(10);
    expect(body.data.map((row: any) => row.views)).toEqual([58, 57, 56]);
  });

  it("keeps count exact across writes (remembered counts are dropped on every committed change)", async () => {
    const all = async () => (await call("data.list", { table: "post", take: 10 })).body.count;
    const before = await all();
    expect(await all()).toBe(before);
    const { id } = await app.db.insertInto("post").values({ title: "counted" }).returning("id").executeTakeFirstOrThrow();
    expect(await all()).toBe(before + 1);
    await call("data.delete", { table: "post", where: { id } });
    expect(await all()).toBe(before);
    // A short last page is counted from its rows.
    expect((await call("data.list", { table: "post", take: 50, skip: 50 })).body).toMatchObject({ count: before });
  });

  it("refuses unknown tables, columns and operators with 400, never SQL", async () => {
    const cases: [unknown, string][] = [
      [{ table: "nope" }, 'unknown table "nope"'],
      [{ table: "post", where: { nope: 1 } }, 'unknown column "nope" on table "post"'],
      [{ table: "post", where: { views: { like: "%" } } }, 'unknown operator "like"'],
      [{ table: "post", orderBy: [{ nope: "asc" }] }, 'unknown column "nope" on table "post"'],
      [{ table: "post", where: { views: "1 or 1=1" } }, "views"],
      [{ table: "post", where: JSON.parse('{"__proto__": {"x": 1}}') }, "__proto__"],
    ];
    for (const [input, message] of cases) {
      const { status, body } = await call("data.list", input);
      expect(status, JSON.stringify(input)).toBe(400);
      expect(body.message).toContain(message);
    }
  });

  it("redacts secrets in every output and refuses to filter or sort on them", async () => {
    const sessions = await call("data.list", { table: "session", take: 200 });
    expect(sessions.status).toBe(200);
    expect(sessions.body.count).toBeGreaterThanOrEqual(2);
    for (const row of sessions.body.data) expect(row.token).toBe("[redacted]");
    const accounts = await call("data.list", { table: "account" });
    for (const row of accounts.body.data) expect(row.password).toBe("[redacted]");
    const one = await call("data.get", { table: "account", where: { id: accounts.body.data[0].id } });
    expect([one.status, one.body.password]).toEqual([200, "[redacted]"]);
    // Probing a secret one character at a time, by filter or by sort order, is refused.
    for (const input of [
      { table: "session", where: { token: { startsWith: "a" } } },
      { table: "session", where: { OR: [{ userId: admin.userId }, { token: "x" }] } },
      { table: "session", where: { NOT: { token: { gt: "m" } } } },
      { table: "account", orderBy: [{ password: "asc" }] },
      { table: "verification", where: { value: { contains: "1" } } },
    ]) {
      const { status, body } = await call("data.list", input);
      expect(status, JSON.stringify(input)).toBe(400);
      expect(body.message).toMatch(/is a secret column/);
    }
    expect((await call("data.get", { table: "session", where: { token: "x" } })).status).toBe(400);
    // Nor through a relation filter, which would read another table's secrets.
    const related = await call("data.list", { table: "user", where: { sessions: { some: { token: { startsWith: "a" } } } } });
    expect(related).toMatchObject({ status: 400, body: { message: 'where.sessions: unknown column "sessions" on table "user" (the admin API filters by columns only)' } });
    // The raw value never appears anywhere in the response text.
    const raw = await app.db.selectFrom("session").select("token").where("userId", "=", admin.userId).executeTakeFirstOrThrow();
    const text = JSON.stringify(await call("data.list", { table: "session", take: 200 }));
    expect(text).not.toContain(raw.token);
  });

  it("creates, reads, updates and deletes rows by an equality where", async () => {
    const created = await call("data.create", { table: "post", data: { title: "from admin", authorId: alice.userId } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ title: "from admin", views: 0, published: false, body: null, authorId: alice.userId });
    const id = created.body.id;
    expect((await call("data.get", { table: "post", where: { id } })).body.title).toBe("from admin");
    const updated = await call("data.update", { table: "post", where: { id }, data: { title: "edited", views: 7, published: true } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ count: 1, data: [{ id, title: "edited", views: 7, published: true }] });
    expect(await app.db.selectFrom("post").select(["title", "views"]).where("id", "=", id).executeTakeFirst()).toEqual({ title: "edited", views: 7 });
    const deleted = await call("data.delete", { table: "post", where: { id } });
    expect([deleted.status, deleted.body.count]).toEqual([200, 1]);
    expect(await app.db.selectFrom("post").select("id").where("id", "=", id).executeTakeFirst()).toBeUndefined();
    expect((await call("data.get", { table: "post", where: { id } })).status).toBe(404);
    expect((await call("data.update", { table: "post", where: { id }, data: { title: "x" } })).status).toBe(404);
    expect((await call("data.delete", { table: "post", where: { id } })).status).toBe(404);
  });

  it("refuses writes without a plain, non-empty equality where, and bad data, with 400", async () => {
    const before = await app.db.query.post.count();
    const cases: [string, unknown, string][] = [
      ["data.update", { table: "post", where: {}, data: { title: "all" } }, "where: name at least one column"],
      ["data.delete", { table: "post", where: {} }, "where: name at least one column"],
      ["data.delete", { table: "post", where: { views: { gte: 0 } } }, "writes match by equality only"],
      ["data.delete", { table: "post", where: { views: null } }, "writes match by equality only"],
      ["data.delete", { table: "post", where: { nope: 1 } }, 'unknown column "nope"'],
      ["data.update", { table: "post", where: { id: 1 }, data: {} }, "Nothing to update"],
      ["data.update", { table: "post", where: { id: 1 }, data: { id: 5 } }, "numbered by the database"],
      ["data.create", { table: "post", data: { title: "x", nope: 1 } }, 'unknown column "nope"'],
      ["data.create", { table: "post", data: { views: 1 } }, "data.title"],
      ["data.create", { table: "post", data: { title: 5 } }, "data.title"],
      ["data.create", { table: "nope", data: {} }, 'unknown table "nope"'],
    ];
    for (const [name, input, message] of cases) {
      const { status, body } = await call(name, input);
      expect(status, `${name} ${JSON.stringify(input)}`).toBe(400);
      expect(body.message).toContain(message);
    }
    expect(await app.db.query.post.count()).toBe(before);
  });

  it("refuses writes to session, account and verification tables with 403", async () => {
    const refused = [
      ["data.create", { table: "session", data: { id: "s", token: "t", userId: admin.userId, expiresAt: new Date().toISOString() } }],
      ["data.update", { table: "account", where: { userId: alice.userId }, data: { password: "x" } }],
      ["data.delete", { table: "session", where: { userId: alice.userId } }],
      ["data.delete", { table: "verification", where: { id: "x" } }],
    ] as const;
    const sessions = await app.db.query.session.count();
    for (const [name, input] of refused) {
      const { status, body } = await call(name, input);
      expect(status, name).toBe(403);
      expect(body.message).toContain("read-only in the admin API");
    }
    expect(await app.db.query.session.count()).toBe(sessions);
  });

  it("edits users (roles included) through the same API", async () => {
    const { status, body } = await call("data.update", { table: "user", where: { email: "alice@example.test" }, data: { role: "editor" } });
    expect([status, body.data[0].role]).toEqual([200, "editor"]);
    await call("data.update", { table: "user", where: { id: alice.userId }, data: { role: null } });
  });

  it("is typed through the same client as every other procedure", async () => {
    const client = app.client({ cookie: admin.cookie });
    const page = await client._admin.data.list({ table: "post", take: 2, orderBy: [{ id: "asc" }] });
    expect(page.data).toHaveLength(2);
    expect(page.count).toBeGreaterThanOrEqual(60);
    const meta = await client._admin.meta();
    expect(meta.tables.some((table) => table.name === "post")).toBe(true);
    await expect(app.client({ cookie: alice.cookie })._admin.meta()).rejects.toMatchObject({ status: 403 });
  });
});

describe("admin options", () => {
  it("needs .auth(): the build throws naming .admin()", () => {
    const app = new App({ db: sqliteMemory() }).schema(schema("1").table("t", (t) => ({ id: t.serial().primaryKey() })).build()).admin();
    expect(String(errorOf(() => app.build()).message)).toContain(".admin()");
  });

  it("reserves _admin: a procedure there fails the build", () => {
    const app = new App({ db: sqliteMemory() });
    expect(errorOf(() => app.procedure("_admin.mine", (base) => base.handler(() => 1))).code).toBe("KERNEL_RESERVED_NAME");
  });
});

describe("the API-key table", () => {
  it("is read-only, and its key hashes are redacted and cannot be filtered on", async () => {
    const app = await new App({ baseUrl: "http://localhost:3000", db: sqliteMemory() })
      .schema(schema("1").auth({ apiKeys: true }).build())
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .admin()
      .start();
    try {
      const boss = await signUp(app, "boss@example.test");
      await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
      const now = new Date().toISOString() as never;
      await app.db.insertInto("apikey").values({ id: "k1", referenceId: boss.userId, key: "hashed-key-value", createdAt: now, updatedAt: now }).execute();
      const as = { cookie: boss.cookie };
      const listed = await rpc(app, "_admin.data.list", { table: "apikey" }, as);
      expect(listed.status).toBe(200);
      expect(listed.body.data[0]).toMatchObject({ id: "k1", key: "[redacted]" });
      expect(JSON.stringify(listed.body)).not.toContain("hashed-key-value");
      expect((await rpc(app, "_admin.data.list", { table: "apikey", where: { key: { startsWith: "h" } } }, as)).status).toBe(400);
      expect((await rpc(app, "_admin.data.update", { table: "apikey", where: { id: "k1" }, data: { enabled: false } }, as)).status).toBe(403);
      expect((await rpc(app, "_admin.data.delete", { table: "apikey", where: { id: "k1" } }, as)).status).toBe(403);
      expect(await app.db.query.apikey.count()).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe("the first admin, named by email", () => {
  it("promotes that user when they sign up, only while nobody is an admin, and never anyone else", async () => {
    const db = await openDatabase("sqlite");
    const app = await adminApp({ dialect: db.dialect, kind: db.kind }, { firstAdminEmail: "Boss@Example.test" }).start();
    try {
      const other = await signUp(app, "other@example.test");
      const boss = await signUp(app, "boss@example.test");
      const roles = async (id: string) => (await app.db.selectFrom("user").select("role").where("id", "=", id).executeTakeFirstOrThrow()).role;
      // Promoted beside the sign-up's answer, not before it.
      await vi.waitFor(async () => expect(await roles(boss.userId)).toBe("admin"), { timeout: 5_000, interval: 20 });
      expect(await roles(other.userId)).not.toBe("admin");
      expect((await rpc(app, "_admin.meta", undefined, { cookie: boss.cookie })).status).toBe(200);
      // Once an admin exists the bootstrap does nothing more, even after a later migration run.
      await app.db.updateTable("user").set({ role: "user" }).where("id", "=", boss.userId).execute();
      await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", other.userId).execute();
      await app.migrator.migrateToLatest();
      expect(await roles(boss.userId)).toBe("user");
    } finally {
      await app.close();
      await db.close();
    }
  });
});
