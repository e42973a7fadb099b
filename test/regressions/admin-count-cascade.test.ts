import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { SECRET } from "../admin/fixture.js";

/**
 * `_admin.data.list` remembers counts until a write to their table is reported. Rows a foreign key
 * deleted (`onDelete: "cascade"`) were not reported, so after deleting a user the dashboard went on
 * counting the posts the database had deleted with them.
 */
const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.text().references("user", "id", { onDelete: "cascade" }) }))
  .build();

describe.each<Family>(families())("admin counts after a cascading delete, on %s", (family) => {
  let database: TestDatabase;
  let app: any;
  let admin: SignedIn;
  beforeAll(async () => {
    database = await openDatabase(family);
    app = await new App({ baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .admin({ listLimit: { default: 2, max: 10 } })
      .start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    const author = await signUp(app, "author@example.test");
    await app.db.insertInto("post").values([1, 2, 3].map((i) => ({ title: `by author ${i}`, authorId: author.userId }))).execute();
    await app.db.insertInto("post").values([{ title: "by admin", authorId: admin.userId }]).execute();
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it("counts the rows left once a delete cascaded to them", async () => {
    const call = (name: string, input: unknown) => rpc(app, `_admin.${name}`, input, { cookie: admin.cookie });
    // A full first page: the count is counted (and remembered).
    expect(await call("data.list", { table: "post", take: 2 })).toMatchObject({ status: 200, body: { count: 4 } });
    const author = await app.db.selectFrom("user").select("id").where("email", "=", "author@example.test").executeTakeFirstOrThrow();
    expect(await call("data.delete", { table: "user", where: { id: author.id } })).toMatchObject({ status: 200, body: { count: 1 } });
    const { status, body } = await call("data.list", { table: "post", take: 2, skip: 0, orderBy: [{ id: "asc" }] });
    expect(status).toBe(200);
    expect(body.data.map((row: { title: string }) => row.title)).toEqual(["by admin"]);
    expect((await call("data.list", { table: "post", take: 0 })).body).toEqual({ data: [], count: 1 });
  });
});
