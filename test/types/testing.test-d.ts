import { describe, expectTypeOf, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { schema } from "../../kernel/schema/index.js";
import { testApp, type MailRow, type TestApp, type TestAppInput } from "../../presets/testing.js";
import type { AdminMailRouter } from "../../plugins/mail/index.js";
import type { AdminJobsRouter } from "../../plugins/jobs/index.js";

const v1 = schema("1")
  .auth()
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text(), ownerId: t.text().references("user", "id") }))
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ db })
    .schema(v1)
    .auth({ secret })
    .admin()
    .mail({ from: "App <a@example.test>" })
    .job("ping", {}, () => undefined)
    .resource("note", { ownerColumn: "ownerId" })
    .procedure("hello", (base) => base.handler(() => "hi"));
}
const app = createApp({ db: undefined as never, secret: "" });

describe("trellis/testing types", () => {
  it("takes the app, its factory or its built app, with no any", async () => {
    const t = await testApp(createApp);
    const byApp: TestApp<typeof app> = t;
    const byFactory: TestApp<typeof createApp> = t;
    void byApp, byFactory;
    const ada = await t.signUp();
    expectTypeOf(ada.client.hello).returns.resolves.toEqualTypeOf<string>();
    expectTypeOf(ada.client.note.create).toBeFunction();
    // @ts-expect-error no such procedure
    void ada.client.nope;
  });

  it("puts every plugin's admin procedures in the client type", async () => {
    const t = await testApp(createApp);
    const admin = await t.asAdmin();
    expectTypeOf(admin.client._admin.mail).toEqualTypeOf<import("../../presets/types.js").ClientOf<AdminMailRouter>>();
    expectTypeOf(admin.client._admin.jobs).toEqualTypeOf<import("../../presets/types.js").ClientOf<AdminJobsRouter>>();
    expectTypeOf(admin.client._admin.meta).toBeFunction();
    expectTypeOf(await admin.client._admin.mail.outbox({ to: "a@example.test" })).toMatchTypeOf<{ to: string; subject: string }[]>();
  });

  it("types the outbox and the jobs", async () => {
    const t = await testApp(createApp);
    expectTypeOf(t.outbox).returns.resolves.toEqualTypeOf<MailRow[]>();
    expectTypeOf(t.jobs.drain).returns.resolves.toEqualTypeOf<void>();
  });
});
