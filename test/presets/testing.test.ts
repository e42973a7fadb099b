import { afterEach, describe, expect, it } from "vitest";
import { App, RpcError } from "trellis";
import { schema } from "trellis/schema";
import { serve } from "trellis/node";
import { connect, testApp, type TestApp, type TestAppInput } from "trellis/testing";

const v1 = schema("1")
  .auth()
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    body: t.text(),
    ownerId: t.text().references("user", "id", { onDelete: "cascade" }),
  }))
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ name: "notes", baseUrl: "http://localhost:3000", db })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .admin()
    .resource("note", { ownerColumn: "ownerId", permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } })
    .procedure("whoami", (base) => base.handler(({ context }) => context.user?.email ?? null));
}

let t: TestApp<any> | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("trellis/testing", () => {
  it("gives each signed-up user a typed client and a fetch carrying their session", async () => {
    const app = await testApp(createApp);
    t = app;
    const ada = await app.signUp({ email: "ada@example.com" });
    const bob = await app.signUp();
    expect(ada.user.email).toBe("ada@example.com");
    expect(await ada.client.whoami()).toBe("ada@example.com");

    const note = await ada.client.note.create({ body: "mine" });
    expect(note).toMatchObject({ body: "mine", ownerId: ada.user.id });
    expect(await bob.client.note.list({})).toEqual([]);

    const viaFetch = await ada.fetch("/rpc/note/list", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(viaFetch.status).toBe(200);
    expect((await viaFetch.json()).json).toHaveLength(1);

    await expect(app.anonymous.client.note.create({ body: "x" })).rejects.toMatchObject({ status: 401 });
    await expect(bob.client.note.get({ where: { id: note.id } })).rejects.toBeInstanceOf(RpcError);
  });

  it("signs an existing user in again, and makes admins", async () => {
    const app = await testApp(createApp);
    t = app;
    await app.signUp({ email: "cy@example.com", password: "a-long-enough-password" });
    const again = await app.signIn("cy@example.com", "a-long-enough-password");
    expect(await again.client.whoami()).toBe("cy@example.com");
    await expect(again.client._admin.meta()).rejects.toMatchObject({ status: 403 });

    const admin = await app.asAdmin();
    expect(admin.user.role).toBe("admin");
    expect((await admin.client._admin.meta()).name).toBe("notes");
    await expect(app.signIn("cy@example.com", "wrong-password")).rejects.toThrow(/sign-in\/email for cy@example.com answered 401/);
  });

  it("connect(url) signs in from Node against a served app", async () => {
    const app = await testApp(createApp);
    t = app;
    const server = await serve(app.app, { port: 0, handleSignals: false, banner: false });
    try {
      const remote = connect(server.url.replace("127.0.0.1", "localhost"));
      const dee = await remote.signUp({ email: "dee@example.com" });
      expect(await dee.client.whoami()).toBe("dee@example.com");
      await dee.client.note.create({ body: "over http" });
      expect(await dee.client.note.list({})).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => server.server.close(() => resolve()));
    }
  });
});
