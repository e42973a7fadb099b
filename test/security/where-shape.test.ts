// One walk of `where`: every check that refuses a column sees every boolean form the compiler
// accepts (AND/OR as arrays or objects, NOT as an object or an array, nested in any order).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App } from "../../presets/trellis.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth()
  .table("item", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .files()
  .build();

/** Every way to hide `leaf` (a filter on one column) inside the boolean forms. */
function disguises(leaf: Record<string, unknown>): Record<string, unknown>[] {
  return [
    leaf,
    { NOT: leaf },
    { NOT: [leaf] },
    { NOT: [{ id: "x" }, leaf] },
    { NOT: { NOT: [leaf] } },
    { NOT: [{ NOT: leaf }] },
    { OR: [{ NOT: [leaf] }] },
    { OR: leaf },
    { AND: leaf },
    { AND: [{ OR: [{ AND: { NOT: [{ OR: leaf }] } }] }] },
    { OR: [{ id: "x" }, { NOT: { AND: [{ NOT: [leaf] }] } }] },
  ];
}

describe("one walker of where (files' storage key, admin secret columns)", () => {
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  let admin: SignedIn;
  const errors: unknown[] = [];

  function createApp() {
    return new App({ baseUrl: ORIGIN, db: sqliteMemory(), storage: memoryStorage(), onError: (error) => errors.push(error) })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .resource("item", { permissions: { list: "public", get: "public", create: "public", update: "public", delete: "public" } })
      .files({ permissions: { upload: "authenticated", list: "authenticated", get: "owner", delete: "owner" } })
      .admin();
  }

  beforeAll(async () => {
    app = await createApp().start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    const form = new FormData();
    form.set("0", new File(["hello"], "a.txt", { type: "text/plain" }));
    form.set("data", JSON.stringify({ json: { file: {} }, meta: [], maps: [["file"]] }));
    const uploaded = await app.handle(new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", headers: { cookie: admin.cookie, origin: ORIGIN }, body: form }));
    expect(uploaded.status).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
    expect(errors).toEqual([]);
  });

  it("refuses the storage key under every boolean form, naming where it sits", async () => {
    for (const where of disguises({ key: { startsWith: "files/" } })) {
      const { status, body } = await rpc(app, "file.list", { where }, { cookie: admin.cookie });
      expect([status, body.code], JSON.stringify(where)).toEqual([400, "BAD_REQUEST"]);
      expect(body.message).toMatch(/^where(\.\w+|\[\d\])*\.key: "key" is not a filterable column of file$/);
    }
    // The same shapes on an ordinary column are accepted: only the key is refused.
    for (const where of disguises({ name: { startsWith: "a" } })) {
      expect((await rpc(app, "file.list", { where }, { cookie: admin.cookie })).status, JSON.stringify(where)).toBe(200);
    }
  });

  it("refuses admin secret columns under every boolean form", async () => {
    for (const where of disguises({ token: { startsWith: "a" } })) {
      const { status, body } = await rpc(app, "_admin.data.list", { table: "session", where }, { cookie: admin.cookie });
      expect(status, JSON.stringify(where)).toBe(400);
      expect(body.message).toMatch(/\.token: "token" is a secret column of "session" and cannot be filtered on$/);
    }
    for (const where of disguises({ userId: { startsWith: "x" } })) {
      expect((await rpc(app, "_admin.data.list", { table: "session", where }, { cookie: admin.cookie })).status, JSON.stringify(where)).toBe(200);
    }
  });

  it("compiles NOT as an array as none-may-match, at any depth (resources)", async () => {
    for (const title of ["a", "b", "c"]) await rpc(app, "item.create", { title });
    const titles = async (where: unknown) => ((await rpc(app, "item.list", { where })).body as { title: string }[]).map((row) => row.title);
    expect(await titles({ NOT: [{ title: "a" }, { title: "b" }] })).toEqual(["c"]);
    expect(await titles({ NOT: { NOT: [{ title: "a" }] } })).toEqual(["a"]);
    expect(await titles({ OR: [{ NOT: [{ title: "a" }] }, { title: "a" }] })).toEqual(["a", "b", "c"]);
    expect(await titles({ OR: { title: "b" } })).toEqual(["b"]);
  });

  it("refuses a malformed node inside any form with 400 naming its path", async () => {
    for (const [where, path] of [
      [{ NOT: [1] }, "where.NOT[0]"],
      [{ OR: [{ NOT: "x" }] }, "where.OR[0].NOT"],
      [{ AND: null }, "where.AND"],
    ] as const) {
      for (const [name, input] of [["file.list", { where }], ["_admin.data.list", { table: "session", where }], ["item.list", { where }]] as const) {
        const { status, body } = await rpc(app, name, input, { cookie: admin.cookie });
        expect([status, body.message], `${name} ${JSON.stringify(where)}`).toEqual([400, `${path}: expected an object of columns and operators`]);
      }
    }
  });
});
