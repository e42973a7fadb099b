// The core tenant flow on SQLite and on PostgreSQL in a schema of its own (the embedded database
// runs the full battery in test/security/tenant-isolation.test.ts): the library's organization
// tables migrate, an organization is created and set active, rows stay inside it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type TestApp } from "../../presets/testing.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const v1 = schema("1")
  .auth({ organizations: { teams: true } })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id", { onDelete: "cascade" }), title: t.text() }))
  .build();

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe.each(families().filter((family) => family !== "pglite"))("tenant flow on %s", (family) => {
  let database: TestDatabase;
  let t: TestApp<any>;
  beforeAll(async () => {
    database = await openDatabase(family);
    const app = new App({ db: { dialect: database.dialect, kind: database.kind }, baseUrl: "http://localhost:3000", onError: () => {} })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .resource("task", { tenant: "orgId" });
    t = await testApp(app);
  });
  afterAll(async () => {
    await t?.close();
    await database?.close();
  });

  const organization = async (who: Actor<any>, slug: string) => {
    const response = await who.fetch("/api/auth/organization/create", json({ name: slug, slug }));
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  };

  it("keeps each organization's rows to itself, and deleting an organization ends its members' access", async () => {
    const ada = await t.signUp();
    const bea = await t.signUp();
    const orgA = await organization(ada, `a-${family}`);
    const orgB = await organization(bea, `b-${family}`);
    const made = await ada.client.task.create({ title: "a's" });
    expect(made.orgId).toBe(orgA);
    await bea.client.task.create({ title: "b's" });
    expect((await ada.client.task.list({})).map((row: { title: string }) => row.title)).toEqual(["a's"]);
    const foreign = await bea.client.task.get({ where: { id: made.id } }).catch((error: { status: number }) => error.status);
    expect(foreign).toBe(404);
    const deleted = await bea.fetch("/api/auth/organization/delete", json({ organizationId: orgB }));
    expect(deleted.status).toBe(200);
    const after = await bea.fetch("/rpc/task/list", json({ json: {} }));
    expect(after.status).toBe(403);
    expect(await t.app.db.selectFrom("task").select("title").execute()).toEqual([{ title: "a's" }]);
  });
});
