import { afterEach, expect, it } from "vitest";
import { App } from "trellis";
import { schema } from "trellis/schema";
import { testApp, type TestApp, type TestAppInput } from "trellis/testing";

/**
 * Runs beside testing.test.ts (vitest runs files in parallel, a process each) with the same user
 * and the same note: each file's databases are its own, so neither sees the other's rows.
 */
const v1 = schema("1")
  .auth()
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text(), ownerId: t.text().references("user", "id", { onDelete: "cascade" }) }))
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ name: "notes", baseUrl: "http://localhost:3000", db })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .resource("note", { ownerColumn: "ownerId", permissions: { list: "owner", create: "authenticated" } });
}

let t: TestApp<typeof createApp> | undefined;
afterEach(() => t?.close());

it.each([1, 2, 3])("write %i: the same user and note as the other file, seen once", async () => {
  t = await testApp(createApp);
  const ada = await t.signUp({ email: "same@example.com" });
  expect((await ada.client.note.create({ body: "in this file" })).id).toBe(1);
  expect(await t.app.db.selectFrom("user").select("email").execute()).toEqual([{ email: "same@example.com" }]);
});
