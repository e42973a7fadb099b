// `timestamps(t)`: every update sets updatedAt to now, unless the update sets it itself.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ...timestamps(t) }))
  .table("plain", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .build();
const PAST = new Date("2020-01-02T03:04:05.678Z");
const PUBLIC = { list: "public", get: "public", create: "public", update: "public", delete: "public" } as const;

describe.each(families())("updatedAt on %s", (family) => {
  let db: TestDatabase;
  let admin: SignedIn;
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  function createApp(database: TestDatabase) {
    return new App({ baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .resource("post", { permissions: PUBLIC })
      .resource("plain", { permissions: PUBLIC })
      .procedure("rename", (base) =>
        base.handler(async ({ input, context }) => {
          const { id, title } = input as { id: number; title: string };
          await context.db.transact((trx) => trx.updateTable("post").set({ title }).where("id", "=", id).execute());
          return "ok";
        }),
      )
      .admin();
  }

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createApp(db).start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  /** A post whose createdAt and updatedAt lie in the past (set by raw SQL, which is left as written). */
  async function oldPost(): Promise<number> {
    const { body } = await rpc(app, "post.create", { title: "first" });
    const stamp = db.kind === "sqlite" ? PAST.toISOString() : PAST;
    await sql`update ${sql.id("post")} set ${sql.id("createdAt")} = ${stamp}, ${sql.id("updatedAt")} = ${stamp} where id = ${body.id}`.execute(app.db);
    return body.id;
  }
  const stamps = async (id: number) => {
    const row = await app.db.selectFrom("post").select(["createdAt", "updatedAt"]).where("id", "=", id).executeTakeFirstOrThrow();
    return { createdAt: new Date(row.createdAt as Date), updatedAt: new Date(row.updatedAt as Date) };
  };
  const isNow = (date: Date) => expect(Math.abs(date.getTime() - Date.now())).toBeLessThan(10_000);

  it("post.update sets updatedAt to now and leaves createdAt", async () => {
    const id = await oldPost();
    const { status, body } = await rpc(app, "post.update", { where: { id }, data: { title: "second" } });
    expect(status).toBe(200);
    isNow(new Date(body.updatedAt));
    expect(new Date(body.createdAt)).toEqual(PAST);
    expect(await stamps(id)).toEqual({ createdAt: PAST, updatedAt: new Date(body.updatedAt) });
  });

  it("an update that sets updatedAt itself keeps its value", async () => {
    const id = await oldPost();
    const chosen = new Date("2021-05-06T07:08:09.010Z");
    expect((await rpc(app, "post.update", { where: { id }, data: { title: "x", updatedAt: chosen.toISOString() } })).status).toBe(200);
    expect((await stamps(id)).updatedAt).toEqual(chosen);
  });

  it("_admin.data.update touches it too", async () => {
    const id = await oldPost();
    const { status, body } = await rpc(app, "_admin.data.update", { table: "post", where: { id }, data: { title: "by admin" } }, { cookie: admin.cookie });
    expect(status).toBe(200);
    isNow(new Date(body.data[0].updatedAt));
    isNow((await stamps(id)).updatedAt);
  });

  it("so does the app's own db.updateTable, inside a transaction too", async () => {
    const id = await oldPost();
    expect((await rpc(app, "rename", { id, title: "renamed" })).status).toBe(200);
    const after = await stamps(id);
    isNow(after.updatedAt);
    expect(after.createdAt).toEqual(PAST);
  });

  it("leaves tables without timestamps as they are", async () => {
    const { body } = await rpc(app, "plain.create", { title: "a" });
    expect(await rpc(app, "plain.update", { where: { id: body.id }, data: { title: "b" } })).toMatchObject({ status: 200, body: { id: body.id, title: "b" } });
  });
});
