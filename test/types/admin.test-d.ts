import { describe, expectTypeOf, it } from "vitest";
import { App, type AppAdminRouter, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { schema } from "../../kernel/schema/index.js";
import { sqliteMemory } from "../support/app.js";
import type { AdminFilesRouter } from "../../plugins/index.js";

const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .build();

const app = new App({ db: sqliteMemory() })
  .schema(v1)
  .auth({ secret: "x".repeat(32) })
  .resource("post")
  .admin({ listLimit: { default: 20, max: 100 } });

describe("the _admin router is typed through the same client", () => {
  it("infers inputs and outputs of _admin.* next to the app's own procedures", async () => {
    type Router = InferRouter<typeof app>;
    expectTypeOf<Router>().toMatchTypeOf<AppAdminRouter>();
    const client = createClient<Router>({ url: "http://localhost:3000" });
    const page = await client._admin.data.list({ table: "post", where: { title: { contains: "a" } }, orderBy: [{ id: "desc" }], take: 10 });
    expectTypeOf(page.count).toEqualTypeOf<number>();
    expectTypeOf(page.data).toEqualTypeOf<Record<string, unknown>[]>();
    const meta = await client._admin.meta();
    expectTypeOf(meta.tables[0]!.columns[0]!.secret).toEqualTypeOf<boolean>();
    const migrations = await client._admin.migrations();
    expectTypeOf(migrations[0]!.executedAt).toEqualTypeOf<Date>();
    expectTypeOf((await client.post.list())[0]!.title).toEqualTypeOf<string>();
    // @ts-expect-error: take is a number
    await client._admin.data.list({ table: "post", take: "10" });
    // @ts-expect-error: table is required
    await client._admin.data.get({ where: { id: 1 } });
  });

  it("types bulk delete and the procedure list", async () => {
    const client = createClient<InferRouter<typeof app>>({ url: "http://localhost:3000" });
    const deleted = await client._admin.data.deleteMany({ table: "post", keys: [1, 2] });
    expectTypeOf(deleted.count).toEqualTypeOf<number>();
    const procedures = await client._admin.procedures();
    expectTypeOf(procedures[0]!.name).toEqualTypeOf<string>();
    expectTypeOf(procedures[0]!.input).toEqualTypeOf<Record<string, unknown> | null>();
    // @ts-expect-error: keys are primary-key values, not a where
    await client._admin.data.deleteMany({ table: "post", keys: { id: 1 } });
  });
});

describe("_admin.files is typed by the files plugin's router type", () => {
  it("lists files with their owner and links, uploads a File, deletes by id", async () => {
    const client = createClient<InferRouter<typeof app> & { _admin: { files: AdminFilesRouter } }>({ url: "http://localhost:3000" });
    const page = await client._admin.files.list({ search: "image/", take: 25 });
    expectTypeOf(page.count).toEqualTypeOf<number>();
    expectTypeOf(page.data[0]!.owner).toEqualTypeOf<{ id: string; email: string } | null>();
    expectTypeOf(page.data[0]!.attachedTo[0]!.id).toEqualTypeOf<string | number>();
    expectTypeOf((await client._admin.files.upload({ file: new File([], "a.png") })).size).toEqualTypeOf<number>();
    expectTypeOf((await client._admin.files.delete({ id: "x" })).name).toEqualTypeOf<string>();
    // The admin router itself is untouched.
    expectTypeOf((await client._admin.data.list({ table: "post" })).count).toEqualTypeOf<number>();
    // @ts-expect-error: take is a number
    await client._admin.files.list({ take: "25" });
  });
});
