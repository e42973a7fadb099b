// Tenant isolation: two organizations, a user in both, users in one, a user in none. Nothing of one
// organization reaches a caller whose active organization is the other, on any surface, and every
// refusal is the documented one: another organization's row is a missing row (404).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcError } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "../../presets/testing.js";

const v1 = schema("1")
  .auth({ organizations: true })
  .table("project", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(), name: t.text() }))
  .table("task", (t) => ({
    id: t.serial().primaryKey(),
    orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(),
    projectId: t.integer().nullable().references("project", "id"),
    title: t.text(),
    embedding: t.vector(2).nullable(),
  }))
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    orgId: t.text().references("organization", "id", { onDelete: "cascade" }),
    ownerId: t.text().references("user", "id"),
    body: t.text(),
  }))
  .relation("project", (rel) => ({ tasks: rel.hasMany("task", { from: "id", to: "projectId" }) }))
  .relation("task", (rel) => ({ project: rel.belongsTo("project", { from: "projectId", to: "id" }) }))
  .search("task", ["title"])
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    // `tasks` is included bare (no related rules applied): the tenant boundary holds all the same.
    .resource("project", { tenant: "orgId", includable: [{ relation: "tasks", scoped: false }] })
    .resource("task", { tenant: "orgId", includable: [{ relation: "project", scoped: true }], live: { revalidateMs: 100 }, mcp: true })
    // My notes inside my organization: owner and tenant compose.
    .resource("note", { tenant: "orgId", ownerColumn: "ownerId", permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } })
    .mcp()
    .openapi();
}

type T = TestApp<typeof createApp>;
type Who = Actor<any>;
const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function call(who: { headers: Headers } | null, name: string, input: unknown, t: T) {
  const headers = new Headers(who?.headers);
  headers.set("content-type", "application/json");
  const response = await t.app.handle(new Request(`http://localhost:3000/rpc/${name.replaceAll(".", "/")}`, { method: "POST", headers, body: JSON.stringify({ json: input }) }));
  const body = (await response.json()) as { json: any };
  return { status: response.status, body: body.json };
}

describe("tenant isolation", () => {
  let t: T;
  let orgA: string;
  let orgB: string;
  /** Alice is in both: one session active in A, another in B. */
  let aliceA: Who;
  let aliceB: Who;
  /** Bob is in B only; Dave in A only; Carol in none. */
  let bob: Who;
  let dave: Who;
  let carol: Who;
  let taskA: number;
  let taskB: number;
  let projectA: number;

  const createOrg = async (who: Who, slug: string) => {
    const response = await who.fetch("/api/auth/organization/create", json({ name: slug, slug }));
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  };
  const join = (userId: string, organizationId: string, role = "member") =>
    t.app.db.insertInto("member").values({ id: `m-${userId}-${organizationId}`, organizationId, userId, role }).execute();
  const setActive = async (who: Who, organizationId: string | null) => {
    const response = await who.fetch("/api/auth/organization/set-active", json({ organizationId }));
    expect(response.status).toBe(200);
  };

  beforeAll(async () => {
    t = await testApp(createApp);
    aliceA = await t.signUp({ email: "alice@a.test" });
    orgA = await createOrg(aliceA, "org-a");
    bob = await t.signUp({ email: "bob@b.test" });
    orgB = await createOrg(bob, "org-b");
    await join(aliceA.user.id, orgB);
    aliceB = await t.signIn("alice@a.test");
    await setActive(aliceB, orgB);
    dave = await t.signUp({ email: "dave@a.test" });
    await join(dave.user.id, orgA);
    await setActive(dave, orgA);
    carol = await t.signUp({ email: "carol@none.test" });

    projectA = (await call(aliceA, "project.create", { name: "alpha" }, t)).body.id;
    const projectB = (await call(bob, "project.create", { name: "beta" }, t)).body.id;
    taskA = (await call(aliceA, "task.create", { title: "a public plan", projectId: projectA, embedding: [0, 1] }, t)).body.id;
    // B's task sits exactly on the vector searched below; A's is further away.
    taskB = (await call(bob, "task.create", { title: "b secret plan", projectId: projectB, embedding: [1, 0] }, t)).body.id;
    // A row of B pointing at A's project (a foreign key does not know about organizations).
    await t.app.db.insertInto("task").values({ orgId: orgB, projectId: projectA, title: "b smuggled into a project of a" }).execute();
  });
  afterAll(() => t?.close());

  it("fills the tenant column from the session, and refuses one sent by the client", async () => {
    const created = await call(dave, "task.create", { title: "dave's" }, t);
    expect(created.status).toBe(200);
    expect(created.body.orgId).toBe(orgA);
    const forged = await call(dave, "task.create", { title: "into b", orgId: orgB }, t);
    expect(forged.status).toBe(400);
    expect(forged.body.message).toBe("orgId is set from the active organization: leave it out (switch organizations with POST /api/auth/organization/set-active)");
    const moved = await call(dave, "task.update", { where: { id: created.body.id }, data: { orgId: orgB } }, t);
    expect(moved.status).toBe(400);
    const batched = await call(dave, "task.batch", { create: [{ title: "ok" }, { title: "no", orgId: orgB }] }, t);
    expect(batched.status).toBe(400);
    expect(await t.app.db.selectFrom("task").select("id").where("orgId", "=", orgB).where("title", "in", ["into b", "no", "ok"]).execute()).toEqual([]);
    await call(dave, "task.delete", { where: { id: created.body.id } }, t);
  });

  it("answers 401 signed out and a 403 naming organization/set-active without an active organization", async () => {
    const anonymous = await call(null, "task.list", {}, t);
    expect(anonymous.status).toBe(401);
    const none = await call(carol, "task.list", {}, t);
    expect(none.status).toBe(403);
    expect(none.body).toMatchObject({ code: "NO_ACTIVE_ORGANIZATION", message: "No active organization: choose one with POST /api/auth/organization/set-active ({ organizationId })" });
    // Before the input is read: a bad input is still the 403.
    expect((await call(carol, "task.create", { nope: 1 }, t)).status).toBe(403);
    expect((await call(carol, "task.get", { where: { id: taskA } }, t)).status).toBe(403);
  });

  it("lists only the active organization's rows, whatever the where or orderBy says about the tenant column", async () => {
    const titles = async (who: Who, input: unknown) => ((await call(who, "task.list", input, t)).body as { title: string }[]).map((row) => row.title).sort();
    expect(await titles(aliceA, {})).toEqual(["a public plan"]);
    expect(await titles(aliceB, {})).toEqual(["b secret plan", "b smuggled into a project of a"]);
    expect(await titles(aliceA, { where: { orgId: orgB } })).toEqual([]);
    expect(await titles(aliceA, { where: { OR: [{ orgId: orgB }, { orgId: { not: orgA } }, { title: { contains: "secret" } }] } })).toEqual([]);
    expect(await titles(aliceA, { orderBy: [{ orgId: "desc" }], take: 100 })).toEqual(["a public plan"]);
    expect(await titles(bob, {})).toEqual(["b secret plan", "b smuggled into a project of a"]);
  });

  it("answers another organization's row exactly as a missing one, on get, update and delete", async () => {
    const missing = await call(aliceA, "task.get", { where: { id: 999_999 } }, t);
    const foreign = await call(aliceA, "task.get", { where: { id: taskB } }, t);
    expect(foreign).toEqual(missing);
    expect(foreign.status).toBe(404);
    expect((await call(aliceA, "task.update", { where: { id: taskB }, data: { title: "mine now" } }, t)).body).toEqual((await call(aliceA, "task.update", { where: { id: 999_999 }, data: { title: "x" } }, t)).body);
    expect((await call(aliceA, "task.delete", { where: { id: taskB } }, t)).status).toBe(404);
    const still = await t.app.db.selectFrom("task").select("title").where("id", "=", taskB).executeTakeFirstOrThrow();
    expect(still.title).toBe("b secret plan");
    // The same user, active in B, reaches it.
    expect((await call(aliceB, "task.get", { where: { id: taskB } }, t)).status).toBe(200);
  });

  it("never includes or filters on another organization's rows through a relation", async () => {
    const project = await call(aliceA, "project.get", { where: { id: projectA }, include: { tasks: true } }, t);
    expect(project.status).toBe(200);
    expect(project.body.tasks.map((task: { title: string }) => task.title)).toEqual(["a public plan"]);
    const listed = await call(aliceA, "project.list", { include: { tasks: true } }, t);
    expect(listed.body.flatMap((row: { tasks: { orgId: string }[] }) => row.tasks.map((task) => task.orgId))).toEqual([orgA]);
    // B's smuggled task belongs to A's project: B sees the task, never the project.
    const smuggled = await call(aliceB, "task.list", { where: { title: { startsWith: "b smuggled" } }, include: { project: true } }, t);
    expect(smuggled.body).toMatchObject([{ title: "b smuggled into a project of a", project: null }]);
    // Relation filters read only the caller's organization.
    expect((await call(aliceA, "project.list", { where: { tasks: { some: { title: { startsWith: "b smuggled" } } } } }, t)).body).toEqual([]);
    expect((await call(aliceB, "task.list", { where: { project: { is: { name: "alpha" } } } }, t)).body).toEqual([]);
  });

  it("rolls back a batch that reaches into another organization, answering the single action's 404", async () => {
    const batch = await call(aliceA, "task.batch", { update: [{ where: { id: taskA }, data: { title: "renamed" } }, { where: { id: taskB }, data: { title: "renamed" } }] }, t);
    expect(batch.status).toBe(404);
    expect(batch.body.message).toBe("update[1]: No task matches");
    const titles = await t.app.db.selectFrom("task").select("title").where("id", "in", [taskA, taskB]).orderBy("id").execute();
    expect(titles.map((row) => row.title)).toEqual(["a public plan", "b secret plan"]);
    expect((await call(aliceA, "task.batch", { delete: [{ where: { id: taskB } }] }, t)).status).toBe(404);
  });

  it("keeps a cursor from another organization's page to the caller's own rows", async () => {
    const first = await call(bob, "task.page", { take: 1, orderBy: [{ id: "asc" }] }, t);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const replayed = await call(aliceA, "task.page", { take: 10, orderBy: [{ id: "asc" }], after: first.body.nextCursor }, t);
    for (const row of replayed.body.items ?? []) expect(row.orgId).toBe(orgA);
    const own = await call(aliceA, "task.page", { take: 10 }, t);
    expect(own.body.items.map((row: { orgId: string }) => row.orgId)).toEqual([orgA]);
  });

  it("searches only the active organization's rows, by words and by nearest vector", async () => {
    const found = await call(aliceA, "task.list", { search: "plan" }, t);
    expect(found.body.map((row: { title: string }) => row.title)).toEqual(["a public plan"]);
    expect((await call(aliceA, "task.list", { search: "secret" }, t)).body).toEqual([]);
    const near = await call(aliceA, "task.list", { nearest: { column: "embedding", vector: [1, 0], k: 5 } }, t);
    expect(near.status).toBe(200);
    expect(near.body.map((row: { title: string }) => row.title)).toEqual(["a public plan"]);
    const widened = await call(aliceA, "task.list", { where: { OR: [{ orgId: orgB }, { title: "b secret plan" }] }, nearest: { column: "embedding", vector: [1, 0], k: 5 } }, t);
    expect(widened.body).toEqual([]);
  });

  it("serves MCP tools under the same boundary", async () => {
    const tool = async (who: Who, name: string, args: unknown) => {
      const headers = new Headers(who.headers);
      headers.set("content-type", "application/json");
      headers.set("accept", "application/json, text/event-stream");
      const response = await t.app.handle(new Request("http://localhost:3000/mcp", { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }) }));
      return (await response.json()) as { result: { isError?: boolean; structuredContent?: any; content: { text: string }[] } };
    };
    const listed = await tool(aliceA, "task_list", {});
    expect(JSON.parse(listed.result.content[0].text).map((row: { orgId: string }) => row.orgId)).toEqual([orgA]);
    const got = await tool(aliceA, "task_get", { where: { id: taskB } });
    expect(got.result.isError).toBe(true);
    expect(got.result.content[0].text).toMatch(/No task matches/);
    const made = await tool(aliceA, "task_create", { title: "via mcp", orgId: orgB });
    expect(made.result.isError).toBe(true);
    expect(await t.app.db.selectFrom("task").select("id").where("title", "=", "via mcp").execute()).toEqual([]);
  });

  it("keeps REST to the same boundary", async () => {
    const rest = async (who: Who, method: string, path: string, body?: unknown) => {
      const response = await who.fetch(path, { method, ...(body !== undefined && { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
      return { status: response.status, body: (await response.json()) as any };
    };
    expect((await rest(aliceA, "GET", `/rest/task/${taskB}`)).status).toBe(404);
    expect((await rest(aliceA, "GET", `/rest/task/${taskB}`)).body).toEqual((await rest(aliceA, "GET", "/rest/task/999999")).body);
    expect((await rest(aliceB, "GET", `/rest/task/${taskB}`)).status).toBe(200);
    const listed = await rest(aliceA, "GET", `/rest/task?where[orgId]=${orgB}`);
    expect(listed).toEqual({ status: 200, body: [] });
    const forged = await rest(aliceA, "POST", "/rest/task", { title: "rest", orgId: orgB });
    expect(forged).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^orgId is set from the active organization/) } });
    expect((await rest(aliceA, "PATCH", `/rest/task/${taskA}`, { orgId: orgB })).status).toBe(400);
    expect((await rest(aliceA, "PATCH", `/rest/task/${taskB}`, { title: "rest" })).status).toBe(404);
    expect((await rest(aliceA, "DELETE", `/rest/task/${taskB}`)).status).toBe(404);
    expect((await rest(carol, "GET", "/rest/task")).status).toBe(403);
  });

  it("composes with ownerColumn: my rows inside my organization", async () => {
    const mine = await call(dave, "note.create", { body: "dave in a" }, t);
    expect(mine.body).toMatchObject({ orgId: orgA, ownerId: dave.user.id });
    await call(aliceA, "note.create", { body: "alice in a" }, t);
    await call(aliceB, "note.create", { body: "alice in b" }, t);
    const bodies = async (who: Who) => ((await call(who, "note.list", {}, t)).body as { body: string }[]).map((row) => row.body);
    expect(await bodies(dave)).toEqual(["dave in a"]);
    expect(await bodies(aliceA)).toEqual(["alice in a"]);
    expect(await bodies(aliceB)).toEqual(["alice in b"]);
    expect((await call(aliceA, "note.get", { where: { id: mine.body.id } }, t)).status).toBe(404);
  });

  it("follows the active organization when it changes, and refuses a removed member at once", async () => {
    const switcher = await t.signIn("alice@a.test");
    await setActive(switcher, orgA);
    expect((await call(switcher, "task.list", {}, t)).body.map((row: { orgId: string }) => row.orgId)).toEqual([orgA]);
    await setActive(switcher, orgB);
    expect(new Set((await call(switcher, "task.list", {}, t)).body.map((row: { orgId: string }) => row.orgId))).toEqual(new Set([orgB]));
    // Setting an organization one does not belong to is refused by the library itself.
    const outsider = await carol.fetch("/api/auth/organization/set-active", json({ organizationId: orgA }));
    expect(outsider.status).toBe(403);

    const erin = await t.signUp({ email: "erin@a.test" });
    await join(erin.user.id, orgA);
    await setActive(erin, orgA);
    expect((await call(erin, "task.list", {}, t)).status).toBe(200);
    // Removed by someone else: the session still names A; the membership no longer holds.
    await t.app.db.deleteFrom("member").where("userId", "=", erin.user.id).execute();
    const removed = await call(erin, "task.list", {}, t);
    expect(removed.status).toBe(403);
    expect(removed.body.message).toMatch(/no longer a member of the active organization.*organization\/set-active/);
  });

  it("streams only the active organization's rows, and ends the stream once the member is removed", async () => {
    const frank = await t.signUp({ email: "frank@a.test" });
    await join(frank.user.id, orgA);
    await setActive(frank, orgA);
    const stream = await t.app.client(frank.headers).task.live({});
    const first = await stream.next();
    expect((first.value as { orgId: string }[]).every((row) => row.orgId === orgA)).toBe(true);
    // A write in B changes nothing frank may see; one in A does.
    await call(bob, "task.create", { title: "b during the stream" }, t);
    await call(dave, "task.create", { title: "a during the stream" }, t);
    const second = await stream.next();
    const rows = second.value as { orgId: string; title: string }[];
    expect(rows.map((row) => row.title)).toContain("a during the stream");
    expect(rows.every((row) => row.orgId === orgA)).toBe(true);
    await t.app.db.deleteFrom("member").where("userId", "=", frank.user.id).execute();
    const ended = await Promise.race([stream.next().then(() => "snapshot", (error) => error), new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000))]);
    expect(ended).toBeInstanceOf(RpcError);
    expect((ended as RpcError<any, any>).status).toBe(403);
  });

  it("ends a stream once its session switches to another organization", async () => {
    const switcher = await t.signIn("alice@a.test");
    await setActive(switcher, orgA);
    const stream = await t.app.client(switcher.headers).task.live({});
    expect(((await stream.next()).value as { orgId: string }[]).every((row) => row.orgId === orgA)).toBe(true);
    await setActive(switcher, orgB);
    // No write follows: only the re-check every revalidateMs (100) can end it.
    const ended = await Promise.race([stream.next().then((step) => step.value, (error) => error), new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000))]);
    expect(ended).toBeInstanceOf(RpcError);
    expect((ended as RpcError<any, any>).message).toBe("The active organization changed; subscribe again");
  });
});
