// A job sent in an organization writes for its sender in that organization: the audit log says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type TestApp, type TestAppInput } from "../../presets/testing.js";
import { rpc } from "../support/app.js";

const v1 = schema("1")
  .auth({ organizations: true })
  .table("note", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .build();

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the audit log of a job sent in an organization", () => {
  let t: TestApp<any>;
  beforeAll(async () => {
    t = await testApp(({ db, secret }: TestAppInput) =>
      new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
        .schema(v1)
        .auth({ secret, emailAndPassword: { enabled: true } })
        .jobs()
        .job("note.write", { input: z.object({ title: z.string() }) }, async ({ data, context }) => {
          await context.db.insertInto("note").values({ title: data.title }).execute();
        })
        .procedure("note.later", (base) => base.input(z.object({ title: z.string() })).handler(({ input, context }) => context.jobs.send("note.write", input)), { permission: "authenticated" })
        .audit()
        .admin(),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const entries = async (headers: Headers) => (await rpc(t.app, "_admin.audit.list", { table: "note", actorKind: "job" }, headers)).body.entries as any[];

  it("records the organization and the member it runs for; a job sent outside one records neither", async () => {
    const admin = await t.asAdmin();
    const ada = await t.signUp();
    await ada.client.note.later({ title: "no team yet" });
    await t.jobs.drain();
    const org = ((await (await ada.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme-audit" }))).json()) as { id: string }).id;
    await ada.client.note.later({ title: "for acme" });
    await t.jobs.drain();

    const byTitle = Object.fromEntries((await entries(admin.headers)).map((entry) => [entry.after.title, entry]));
    expect(byTitle["for acme"]).toMatchObject({ source: "job", job: "note.write", organizationId: org, actor: { kind: "job", userId: ada.user.id } });
    expect(byTitle["no team yet"]).toMatchObject({ source: "job", job: "note.write", organizationId: null, actor: { kind: "job", userId: null } });
  });
});
