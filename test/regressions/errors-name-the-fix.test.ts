// Errors that hid their fix. A /rpc body without oRPC's `{"json": ...}` envelope was read as no
// input (`expected object, received undefined`); and a typo in `where` of a list scoped by its rule
// or its owner was reported at the path of the rewritten query (`where.AND[0].titel`), not at the
// path the caller sent (`where.titel`). A permission function's refusal stays 403, signed in or not,
// as SPEC.md says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App } from "../../presets/trellis.js";
import { request, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp } from "../support/auth.js";

const v1 = schema("1")
  .auth()
  .files()
  .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ownerId: t.text().nullable() }))
  .table("memo", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ownerId: t.text().nullable() }))
  .build();

function createApp() {
  return new App({ baseUrl: ORIGIN, db: sqliteMemory(), storage: memoryStorage() })
    .schema(v1)
    .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
    // A rule that narrows the list to the caller's rows, and refuses a signed-out caller.
    .resource("task", { permissions: { list: ({ context }) => (context.user ? { ownerId: context.user.id } : false), create: "public" } })
    .resource("memo", { ownerColumn: "ownerId", permissions: { list: "owner", create: "authenticated" } })
    .files({ permissions: { upload: "authenticated", list: "owner", get: "owner", delete: "owner" } })
    .procedure("closed", (base) => base.handler(() => "never"), { permission: () => false })
    .openapi();
}

describe("errors that name their fix", () => {
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  let cookie: string;
  beforeAll(async () => {
    app = await createApp().start();
    cookie = (await signUp(app, "ada@example.com")).cookie;
  });
  afterAll(() => app?.close());

  it("answers a /rpc body without the json envelope 400, naming the envelope and /rest", async () => {
    const response = await app.handle(new Request("http://localhost/rpc/task/create", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x" }) }));
    expect(response.status).toBe(400);
    const { json } = await response.json();
    expect(json).toMatchObject({ code: "BAD_REQUEST", status: 400 });
    expect(json.message).toContain('{"json": <input>}');
    expect(json.message).toContain("/rest");
    // The envelope itself is unchanged: `{}` is still no input, `{ json }` the input.
    expect((await rpc(app, "task.create", { title: "x" })).status).toBe(200);
    expect((await rpc(app, "task.list", undefined, { cookie })).status).toBe(200);
    // Not an object at all says the same.
    const list = await app.handle(new Request("http://localhost/rpc/task/create", { method: "POST", headers: { "content-type": "application/json" }, body: "[1]" }));
    expect([list.status, (await list.json()).json.message]).toEqual([400, expect.stringContaining('{"json": <input>}')]);
  });

  it("answers 403 when a permission function refuses, whether or not the caller is signed in", async () => {
    // SPEC.md: "custom functions (403 on false)"; "`admin` and function permissions yield 403";
    // Errors: "403: An admin permission or a function permission denies the caller". A signed-out
    // caller is no exception: 401 belongs to `authenticated` (and the rules built on it) alone.
    expect(await rpc(app, "task.list")).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
    expect((await request(app, "GET", "/rest/task")).status).toBe(403);
    expect(await rpc(app, "task.page")).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
    expect(await rpc(app, "closed")).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
    expect(await rpc(app, "closed", undefined, { cookie })).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
  });

  it("reports a typo in where at the path the caller sent, on a scoped list", async () => {
    for (const procedure of ["task.list", "memo.list", "file.list"]) {
      const typo = await rpc(app, procedure, { where: { titel: "x" } }, { cookie });
      expect(typo.status, procedure).toBe(400);
      expect(typo.body.data?.path ?? typo.body.message, procedure).not.toContain("AND");
      expect(typo.body.message, procedure).toContain("where.titel");
      const column = procedure === "file.list" ? "name" : "title";
      const nested = await rpc(app, procedure, { where: { OR: [{ [column]: "y" }, { titel: "x" }] } }, { cookie });
      expect(nested.body.message, procedure).toContain("where.OR[1].titel");
    }
  });
});
