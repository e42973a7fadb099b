import Database from "better-sqlite3";
import { SqliteDialect } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { App } from "../../presets/trellis.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

/**
 * Relation filters in `where` (some, every, none over hasMany and manyToMany; is, isNot over
 * belongsTo) and rules that read relations ("owner or assignee"), through RPC, REST and MCP, on
 * every database. A relation filter reads only the related rows its caller could list.
 */
const v1 = schema("1")
  .auth()
  .table("project", (t) => ({ id: t.serial().primaryKey(), name: t.text(), ownerId: t.text().references("user", "id") }))
  .table("task", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    projectId: t.integer().nullable().references("project", "id"),
    ownerId: t.text().references("user", "id"),
  }))
  .table("assignee", (t) => ({ id: t.serial().primaryKey(), taskId: t.integer().references("task", "id", { onDelete: "cascade" }), userId: t.text() }))
  .table("label", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .table("task_label", (t) => ({ id: t.serial().primaryKey(), taskId: t.integer().references("task", "id"), labelId: t.integer().references("label", "id") }))
  .relation("project", (rel) => ({ tasks: rel.hasMany("task", { from: "id", to: "projectId" }) }))
  .relation("task", (rel) => ({
    assignees: rel.hasMany("assignee", { from: "id", to: "taskId" }),
    project: rel.belongsTo("project", { from: "projectId", to: "id" }),
    owner: rel.belongsTo("user", { from: "ownerId", to: "id" }),
    labels: rel.manyToMany("label", "task_label", { from: "id", to: "id", pivotFrom: "taskId", pivotTo: "labelId" }),
  }))
  .build();

/** "Owner or assignee", as a where rule: no custom code. */
const ownerOrAssignee = { OR: [{ ownerId: "$user.id" }, { assignees: { some: { userId: "$user.id" } } }] };

it("a where rule that does not fit its table fails the build, naming the rule's path", () => {
  const app = new App({ baseUrl: ORIGIN, db: { dialect: new SqliteDialect({ database: new Database(":memory:") }), kind: "sqlite" } })
    .schema(v1)
    .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
    // @ts-expect-error "nope" is not a column of assignee: refused by the types too
    .resource("task", { permissions: { list: { assignees: { some: { nope: "$user.id" } } } } });
  expect(() => app.build()).toThrow(/the list rule does not fit table "task": rule\.assignees\.some\.nope: unknown column "nope" on table "assignee"/);
});

describe.each(families())("relation filters and relation rules on %s", (family) => {
  let db: TestDatabase;
  let app: any;
  let ada: SignedIn;
  let bo: SignedIn;
  let cy: SignedIn;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await new App({ baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind, live: localLive() }, onError: (error) => console.error(error) })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .resource("project", { ownerColumn: "ownerId", permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } })
      .resource("task", {
        ownerColumn: "ownerId",
        includable: [{ relation: "assignees", scoped: false }],
        permissions: { list: ownerOrAssignee, get: ownerOrAssignee, create: "authenticated", update: ownerOrAssignee, delete: ownerOrAssignee },
        live: true,
        mcp: ["list"],
      })
      .resource("label", {
        live: true,
        // A function may answer with a where on get, update and delete too: the row must match it.
        permissions: { get: ({ context }) => (context.user ? true : { name: { not: "later" } }), update: () => ({ name: { not: "frozen" } }), delete: () => ({ name: { not: "frozen" } }) },
      })
      .openapi()
      .mcp()
      .start();
    [ada, bo, cy] = [await signUp(app, "ada@example.test"), await signUp(app, "bo@example.test"), await signUp(app, "cy@example.test")];
    const as = (who: SignedIn) => app.client({ cookie: who.cookie, origin: ORIGIN });
    ids.apollo = (await as(ada).project.create({ name: "Apollo" })).id;
    ids.secret = (await as(bo).project.create({ name: "Secret" })).id;
    ids.t1 = (await as(ada).task.create({ title: "ada task", projectId: ids.apollo })).id;
    ids.t2 = (await as(bo).task.create({ title: "bo task", projectId: ids.secret })).id;
    ids.t3 = (await as(bo).task.create({ title: "bo private", projectId: ids.secret })).id;
    ids.t4 = (await as(cy).task.create({ title: "cy task" })).id;
    ids.t5 = (await as(bo).task.create({ title: "bo in apollo", projectId: ids.apollo })).id;
    ids.urgent = (await as(ada).label.create({ name: "urgent" })).id;
    ids.later = (await as(ada).label.create({ name: "later" })).id;
    await app.db.insertInto("assignee").values([{ taskId: ids.t2, userId: ada.userId }, { taskId: ids.t3, userId: cy.userId }]).execute();
    await app.db.insertInto("task_label").values([{ taskId: ids.t1, labelId: ids.urgent }, { taskId: ids.t2, labelId: ids.urgent }, { taskId: ids.t2, labelId: ids.later }]).execute();
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const list = async (who: SignedIn, where?: unknown, name = "task.list") => {
    const { status, body } = await rpc(app, name, { where, orderBy: [{ id: "asc" }] }, { cookie: who.cookie });
    if (status !== 200) throw new Error(`${status} ${JSON.stringify(body)}`);
    return (body as { title?: string; name?: string }[]).map((row) => row.title ?? row.name);
  };

  it("a where rule reading a relation: each caller lists what they own or are assigned, signed out is 401", async () => {
    expect(await list(ada)).toEqual(["ada task", "bo task"]);
    expect(await list(bo)).toEqual(["bo task", "bo private", "bo in apollo"]);
    expect(await list(cy)).toEqual(["bo private", "cy task"]);
    expect((await rpc(app, "task.list", {})).status).toBe(401);
    expect((await rpc(app, "task.get", { where: { id: ids.t1 } })).status).toBe(401);
  });

  it("applies the rule on get and update in the statement: 404 outside it, as for a missing row", async () => {
    expect((await rpc(app, "task.get", { where: { id: ids.t2 } }, { cookie: ada.cookie })).body).toMatchObject({ title: "bo task" });
    expect((await rpc(app, "task.get", { where: { id: ids.t3 } }, { cookie: ada.cookie })).status).toBe(404);
    const updated = await rpc(app, "task.update", { where: { id: ids.t2 }, data: { title: "bo task" } }, { cookie: ada.cookie, origin: ORIGIN });
    expect(updated.status).toBe(200);
    const refused = await rpc(app, "task.update", { where: { id: ids.t3 }, data: { title: "taken" } }, { cookie: ada.cookie, origin: ORIGIN });
    expect(refused).toMatchObject({ status: 404, body: { message: "No task matches" } });
    expect((await rpc(app, "task.get", { where: { id: ids.t3 } }, { cookie: bo.cookie })).body).toMatchObject({ title: "bo private" });
  });

  it("applies the rule on delete and on each batch item, and a function's where on get, update and delete", async () => {
    const task = (await app.client({ cookie: cy.cookie, origin: ORIGIN }).task.create({ title: "to drop" })).id;
    await app.db.insertInto("assignee").values({ taskId: task, userId: bo.userId }).execute();
    expect((await rpc(app, "task.delete", { where: { id: task } }, { cookie: ada.cookie, origin: ORIGIN })).status).toBe(404);
    const batch = await rpc(app, "task.batch", { update: [{ where: { id: task }, data: { title: "x" } }] }, { cookie: ada.cookie, origin: ORIGIN });
    expect(batch).toMatchObject({ status: 404, body: { message: "update[0]: No task matches" } });
    // Bo is an assignee: the rule lets him delete it.
    expect((await rpc(app, "task.delete", { where: { id: task } }, { cookie: bo.cookie, origin: ORIGIN })).body).toMatchObject({ title: "to drop" });

    const frozen = (await rpc(app, "label.create", { name: "frozen" })).body.id;
    expect((await rpc(app, "label.get", { where: { id: ids.later } })).status).toBe(404);
    expect((await rpc(app, "label.get", { where: { id: ids.later } }, { cookie: ada.cookie })).status).toBe(200);
    expect((await rpc(app, "label.update", { where: { id: frozen }, data: { name: "thawed" } })).status).toBe(404);
    expect((await rpc(app, "label.delete", { where: { id: frozen } })).status).toBe(404);
    expect((await rpc(app, "label.get", { where: { id: frozen } }, { cookie: ada.cookie })).body).toMatchObject({ name: "frozen" });
    await app.db.deleteFrom("label").where("id", "=", frozen).execute();
  });

  it("some, none and every over hasMany and manyToMany", async () => {
    expect(await list(bo, { assignees: { some: { userId: ada.userId } } })).toEqual(["bo task"]);
    expect(await list(bo, { assignees: { none: {} } })).toEqual(["bo in apollo"]);
    expect(await list(ada, { labels: { some: { name: "later" } } })).toEqual(["bo task"]);
    expect(await list(ada, { labels: { none: { name: "later" } } })).toEqual(["ada task"]);
    expect(await list(ada, { labels: { every: { name: "urgent" } } })).toEqual(["ada task"]);
    // `every` holds where there is no related row at all.
    expect(await list(cy, { labels: { every: { name: "urgent" } } })).toEqual(["bo private", "cy task"]);
    expect(await list(ada, { NOT: { labels: { some: {} } } })).toEqual([]);
  });

  it("is and isNot over belongsTo, null included", async () => {
    expect(await list(ada, { project: { is: { name: "Apollo" } } })).toEqual(["ada task"]);
    // A project the caller may not list counts as none: "bo private" is in Bo's project.
    expect(await list(cy, { project: { is: null } })).toEqual(["bo private", "cy task"]);
    expect(await list(cy, { project: { isNot: null } })).toEqual([]);
    expect(await list(ada, { project: { isNot: { name: "Apollo" } } })).toEqual(["bo task"]);
  });

  it("never reveals related rows the caller could not list, at any depth", async () => {
    // Ada sees "bo task", but not its project "Secret" (projects are listed by their owner only).
    expect(await list(ada, { project: { is: { name: "Secret" } } })).toEqual([]);
    expect(await list(ada, { project: { is: {} } })).toEqual(["ada task"]);
    expect(await list(bo, { project: { is: { name: "Secret" } } })).toEqual(["bo task", "bo private"]);
    // "bo in apollo" is in Ada's project, but not a task Ada may list: her project does not match.
    expect(await list(ada, { tasks: { some: { title: "bo in apollo" } } }, "project.list")).toEqual([]);
    expect(await list(ada, { tasks: { some: { title: "ada task" } } }, "project.list")).toEqual(["Apollo"]);
    expect(await list(bo, { tasks: { some: { assignees: { some: { userId: ada.userId } } } } }, "project.list")).toEqual(["Secret"]);
  });

  it("refuses a bad nested where with 400 and the path the caller sent", async () => {
    const bad = async (where: unknown) => {
      const { status, body } = await rpc(app, "task.list", { where }, { cookie: ada.cookie });
      return { status, message: body.message };
    };
    expect(await bad({ assignees: { some: { nope: 1 } } })).toEqual({ status: 400, message: 'where.assignees.some.nope: unknown column "nope" on table "assignee"' });
    expect(await bad({ assignees: { some: { userId: { near: "x" } } } })).toMatchObject({ status: 400, message: expect.stringMatching(/^where\.assignees\.some\.userId\.near: unknown operator "near"/) });
    expect(await bad({ assignees: { any: {} } })).toMatchObject({ status: 400, message: expect.stringMatching(/^where\.assignees\.any: unknown relation operator "any" on hasMany relation "assignees" \(use some, every, none\)/) });
    expect(await bad({ project: { some: {} } })).toMatchObject({ status: 400, message: expect.stringMatching(/use is, isNot/) });
    expect(await bad({ assignees: { some: null } })).toMatchObject({ status: 400, message: expect.stringMatching(/^where\.assignees\.some: /) });
    expect(await bad({ assignees: true })).toMatchObject({ status: 400, message: expect.stringMatching(/^where\.assignees: "assignees" is a hasMany relation/) });
    // The user table has no resource and the relation is not includable: nothing to filter on.
    expect(await bad({ owner: { is: { email: "bo@example.test" } } })).toMatchObject({ status: 400, message: expect.stringMatching(/^where\.owner: "owner" cannot be filtered on: table "user" has no resource/) });
    // Query cost: nesting depth and the number of relation filters.
    const deep = { project: { is: { tasks: { some: { project: { is: { tasks: { some: {} } } } } } } } };
    expect(await bad(deep)).toMatchObject({ status: 400, message: expect.stringMatching(/relation filters may nest at most 3 levels deep/) });
    const many = { OR: Array.from({ length: 11 }, () => ({ labels: { some: {} } })) };
    expect(await bad(many)).toMatchObject({ status: 400, message: expect.stringMatching(/at most 10 relation filters in one query/) });
  });

  it("on REST (where in the query string) and MCP", async () => {
    const rest = await request(app, "GET", `/rest/task?${new URLSearchParams({ "where[labels][some][name]": "later" })}`, { headers: { cookie: ada.cookie } });
    expect(rest).toMatchObject({ status: 200, body: [{ title: "bo task" }] });
    // Values deeper than the columns are coerced by the related column's type (an integer here).
    const byNumber = await request(app, "GET", `/rest/project?${new URLSearchParams({ "where[tasks][some][id]": String(ids.t1) })}`, { headers: { cookie: ada.cookie } });
    expect(byNumber).toMatchObject({ status: 200, body: [{ name: "Apollo" }] });
    const restBad = await request(app, "GET", `/rest/task?${new URLSearchParams({ "where[labels][some][nope]": "x" })}`, { headers: { cookie: ada.cookie } });
    expect(restBad).toMatchObject({ status: 400, body: { message: expect.stringMatching(/where\.labels\.some\.nope: unknown column/) } });
    const call = await request(app, "POST", "/mcp", {
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", cookie: ada.cookie },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "task_list", arguments: { where: { project: { is: { name: "Secret" } } } } } }),
    });
    expect(call.status).toBe(200);
    const text = typeof call.body === "string" ? call.body : JSON.stringify(call.body);
    const message = JSON.parse(text.includes("data:") ? text.slice(text.indexOf("{")) : text);
    expect(JSON.parse(message.result.content[0].text)).toEqual([]);
  });

  it("live: a relation filter re-runs when the related table changes", async () => {
    const stream = await app.client({ cookie: ada.cookie }).task.live({ where: { labels: { some: { name: "hot" } } } });
    try {
      expect((await stream.next()).value).toEqual([]);
      await rpc(app, "label.update", { where: { id: ids.later }, data: { name: "hot" } });
      expect(((await stream.next()).value as { title: string }[]).map((row) => row.title)).toEqual(["bo task"]);
    } finally {
      await stream.return();
      await rpc(app, "label.update", { where: { id: ids.later }, data: { name: "later" } });
    }
  });
});
