// Object-level access: which rows a caller can reach, through every way of naming them.
import Database from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sqliteDialect } from "../../kernel/db/dialect/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { errorOf, rpc, sqliteMemory } from "../support/app.js";
import { signUp, ORIGIN, type SignedIn } from "../support/auth.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

const v1 = schema("1")
  .auth()
  .table("project", (t) => ({ id: t.serial().primaryKey(), name: t.text(), ownerId: t.text().nullable().references("user", "id") }))
  .table("task", (t) => ({
    id: t.serial().primaryKey(),
    projectId: t.integer().references("project", "id"),
    parentId: t.integer().nullable(),
    title: t.text(),
    ownerId: t.text().nullable().references("user", "id"),
  }))
  .table("review", (t) => ({ id: t.serial().primaryKey(), projectId: t.integer().references("project", "id"), body: t.text() }))
  .table("audit", (t) => ({ id: t.serial().primaryKey(), projectId: t.integer().references("project", "id"), entry: t.text() }))
  .table("label", (t) => ({ id: t.serial().primaryKey(), projectId: t.integer().references("project", "id"), name: t.text() }))
  .relation("project", (rel) => ({
    tasks: rel.hasMany("task", { from: "id", to: "projectId" }),
    myTasks: rel.hasMany("task", { from: "id", to: "projectId" }),
    reviews: rel.hasMany("review", { from: "id", to: "projectId" }),
    audits: rel.hasMany("audit", { from: "id", to: "projectId" }),
    labels: rel.hasMany("label", { from: "id", to: "projectId" }),
    owner: rel.belongsTo("user", { from: "ownerId", to: "id" }),
  }))
  .relation("task", (rel) => ({ parent: rel.belongsTo("task", { from: "parentId", to: "id" }) }))
  .build();

const owned = { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } as const;

function createApp(db: { dialect: TestDatabase["dialect"]; kind: TestDatabase["kind"] }) {
  return new App({ baseUrl: ORIGIN, db })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("project", {
      ownerColumn: "ownerId",
      permissions: { create: "authenticated", update: "owner", delete: "owner" },
      includable: [
        "tasks",
        { relation: "myTasks", scoped: true },
        { relation: "reviews", scoped: true },
        { relation: "audits", scoped: true },
        { relation: "labels", scoped: true },
        { relation: "owner", scoped: false },
      ],
    })
    .resource("task", { ownerColumn: "ownerId", permissions: owned, includable: [{ relation: "parent", scoped: true }] })
    .resource("review", { permissions: { list: "authenticated" } })
    .resource("audit", { permissions: { list: "admin" } })
    .resource("label", { permissions: { list: ({ context }) => context.user?.email.endsWith("@staff.test") ?? false } });
}

type Built = ReturnType<ReturnType<typeof createApp>["build"]>;

describe.each(families())("object-level access on %s", (family) => {
  let db: TestDatabase;
  let app: Built;
  let alice: SignedIn;
  let bob: SignedIn;
  let staff: SignedIn;
  let admin: SignedIn;
  let warnings: string[] = [];
  /** SQL text of every statement, on SQLite (better-sqlite3's verbose hook). */
  const statements: string[] = [];
  const as = (user: SignedIn | null): HeadersInit => (user ? { cookie: user.cookie } : {});

  beforeAll(async () => {
    if (family === "sqlite") {
      const database = new Database(":memory:", { verbose: (text) => statements.push(String(text)) });
      db = { kind: "sqlite", family, dialect: sqliteDialect({ database: database as unknown as SqliteDatabase }), close: async () => void database.close() };
    } else {
      db = await openDatabase(family);
    }
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      app = await createApp(db).start();
      warnings = warn.mock.calls.map((call) => String(call[0]));
    } finally {
      warn.mockRestore();
    }
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "bob@example.test");
    staff = await signUp(app, "sam@staff.test");
    admin = await signUp(app, "root@example.test");
    await app.db.updateTable("user").set({ role: "user,admin" }).where("id", "=", admin.userId).execute();
    await app.db.insertInto("project").values([{ name: "p1", ownerId: alice.userId }, { name: "p2", ownerId: bob.userId }]).execute();
    await app.db
      .insertInto("task")
      .values([
        { projectId: 1, title: "alice-1", ownerId: alice.userId },
        { projectId: 1, title: "bob-1", ownerId: bob.userId },
        { projectId: 2, title: "bob-2", ownerId: bob.userId },
        { projectId: 1, title: "alice-child-of-bob", ownerId: alice.userId, parentId: 2 },
        { projectId: 1, title: "alice-child-of-alice", ownerId: alice.userId, parentId: 1 },
      ])
      .execute();
    await app.db.insertInto("review").values([{ projectId: 1, body: "r1" }]).execute();
    await app.db.insertInto("audit").values([{ projectId: 1, entry: "a1" }]).execute();
    await app.db.insertInto("label").values([{ projectId: 1, name: "l1" }]).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const titles = (rows: { title: string }[]) => rows.map((row) => row.title);
  const firstProject = async (include: Record<string, true>, user: SignedIn | null) => {
    const listed = await rpc(app, "project.list", { where: { id: 1 }, include }, as(user));
    const got = await rpc(app, "project.get", { where: { id: 1 }, include }, as(user));
    expect(listed.status).toBe(200);
    expect(got.status).toBe(200);
    // list and get apply the same rule to included rows.
    expect(listed.body[0]).toEqual(got.body);
    return got.body;
  };

  describe("include and the related resource's rules", () => {
    it("warns at build about a bare includable relation that bypasses an owner rule, naming resource, relation and rule", () => {
      const bypass = warnings.filter((line) => line.includes("RESOURCE_INCLUDE_BYPASS"));
      expect(bypass).toHaveLength(1);
      expect(bypass[0]).toMatch(/resource "project" includes "tasks"/);
      expect(bypass[0]).toMatch(/list "owner", ownerColumn "ownerId"/);
    });

    it("keeps SPEC's contract for a bare name: every related row, whoever asks", async () => {
      expect(titles((await firstProject({ tasks: true }, null)).tasks)).toEqual(["alice-1", "bob-1", "alice-child-of-bob", "alice-child-of-alice"]);
    });

    it("applies the related owner rule to a scoped include: the caller's rows only, none signed out (no 401)", async () => {
      expect(titles((await firstProject({ myTasks: true }, alice)).myTasks)).toEqual(["alice-1", "alice-child-of-bob", "alice-child-of-alice"]);
      expect(titles((await firstProject({ myTasks: true }, bob)).myTasks)).toEqual(["bob-1"]);
      expect((await firstProject({ myTasks: true }, null)).myTasks).toEqual([]);
    });

    it("applies authenticated, admin and function list rules to scoped includes", async () => {
      expect((await firstProject({ reviews: true }, null)).reviews).toEqual([]);
      expect((await firstProject({ reviews: true }, bob)).reviews).toMatchObject([{ body: "r1" }]);
      expect((await firstProject({ audits: true }, alice)).audits).toEqual([]);
      expect((await firstProject({ audits: true }, admin)).audits).toMatchObject([{ entry: "a1" }]);
      expect((await firstProject({ labels: true }, alice)).labels).toEqual([]);
      expect((await firstProject({ labels: true }, staff)).labels).toMatchObject([{ name: "l1" }]);
    });

    it("hides a belongsTo row the caller may not list as null, on a self relation too", async () => {
      const mine = await rpc(app, "task.list", { include: { parent: true }, orderBy: [{ id: "asc" }] }, as(alice));
      expect(mine.status).toBe(200);
      const parents = Object.fromEntries(mine.body.map((task: { title: string; parent: { title: string } | null }) => [task.title, task.parent?.title ?? null]));
      expect(parents).toEqual({ "alice-1": null, "alice-child-of-bob": null, "alice-child-of-alice": "alice-1" });
    });

    it("filters included rows inside the statement that reads them, whatever the page size (no query per row)", async () => {
      if (family !== "sqlite") return; // Postgres answers a whole include in one statement: test/db/query.test.ts counts them.
      await app.db.insertInto("project").values(Array.from({ length: 20 }, (_, i) => ({ name: `bulk ${i}`, ownerId: alice.userId }))).execute();
      const reads = async (take: number) => {
        statements.length = 0;
        const listed = await rpc(app, "project.list", { take, include: { myTasks: true, reviews: true } }, as(alice));
        expect(listed.status).toBe(200);
        return statements.filter((text) => /from "(task|review)"/.test(text));
      };
      const few = await reads(2);
      const many = await reads(22);
      expect(many).toHaveLength(2);
      expect(few).toHaveLength(2);
      // The owner condition sits in the statement that reads the tasks.
      expect(many.find((text) => text.includes('from "task"'))).toMatch(/and "__t"\."ownerId" = /);
      await app.db.deleteFrom("project").where("name", "like", "bulk %").execute();
    });

    it("refuses an include the resource does not allow, or one carrying a where from the client, with 400", async () => {
      const notAllowed = await rpc(app, "task.list", { include: { project: true } }, as(alice));
      expect(notAllowed.status).toBe(400);
      const filtered = await rpc(app, "project.list", { include: { myTasks: { where: { ownerId: bob.userId } } } }, as(alice));
      expect(filtered.status).toBe(400);
    });
  });

  describe("owner rows (hostile callers; these rules already hold)", () => {
    it("keeps an owner list to the caller's rows whatever the where says", async () => {
      const hostile = [
        { ownerId: bob.userId },
        { OR: [{ ownerId: bob.userId }, { id: { gt: 0 } }] },
        { NOT: { ownerId: alice.userId } },
        { ownerId: { in: [alice.userId, bob.userId] }, title: { startsWith: "bob" } },
      ];
      for (const where of hostile) {
        const listed = await rpc(app, "task.list", { where }, as(alice));
        expect(listed.status).toBe(200);
        expect(listed.body.every((task: { ownerId: string }) => task.ownerId === alice.userId)).toBe(true);
      }
    });

    it("answers another owner's row exactly like a missing one on get, update and delete", async () => {
      const missing = await rpc(app, "task.get", { where: { id: 9999 } }, as(alice));
      for (const [name, input] of [
        ["task.get", { where: { id: 2 } }],
        ["task.update", { where: { id: 2 }, data: { title: "mine now" } }],
        ["task.delete", { where: { id: 2 } }],
      ] as const) {
        const foreign = await rpc(app, name, input, as(alice));
        expect(foreign.status).toBe(404);
        expect(foreign.body).toEqual({ ...missing.body });
      }
      expect((await rpc(app, "task.get", { where: { id: 2 } }, as(bob))).body).toMatchObject({ title: "bob-1" });
    });

    it("refuses a key where with an extra column (no reaching a row by its owner) with 400", async () => {
      const sneaky = await rpc(app, "task.get", { where: { id: 2, ownerId: alice.userId } }, as(alice));
      expect(sneaky.status).toBe(400);
    });
  });
});

describe("include build rules", () => {
  const base = () =>
    new App({ db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: SECRET })
      .resource("task", { ownerColumn: "ownerId", permissions: owned });

  it("warns about a bare relation to a table no resource exposes, and not about a deliberate scoped: false", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      base().resource("project", { includable: ["owner"] }).build().close();
      base().resource("project", { includable: [{ relation: "owner", scoped: false }] }).build().close();
      const lines = warn.mock.calls.map((call) => String(call[0]));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/RESOURCE_INCLUDE_BYPASS: resource "project" includes "owner".*table "user" has no resource/);
    } finally {
      warn.mockRestore();
    }
  });

  it("fails the build for a scoped include whose table has no resource", () => {
    const error = errorOf(() => base().resource("project", { includable: [{ relation: "owner", scoped: true }] }).build());
    expect(error).toMatchObject({ code: "RESOURCE_INCLUDE_UNSCOPABLE", plugin: "resources" });
    expect(error.message).toMatch(/"project" includes "owner" scoped, but table "user" has no resource/);
  });

  it("still names unknown includable relations, in either form", () => {
    // @ts-expect-error "nope" is not a relation of project
    expect(() => base().resource("project", { includable: [{ relation: "nope", scoped: true }] }).build()).toThrow(/unknown relations: nope/);
  });
});
