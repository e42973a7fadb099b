import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { request, rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { bytes, filesApp, upload, uploadForm } from "./fixture.js";

describe("file permissions: functions, admin, custom roles", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  let bo: SignedIn;
  let editor: SignedIn;
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, {
      files: {
        roles: ["editor"],
        permissions: {
          upload: ({ context }) => context.user?.email.endsWith("@example.test") ?? false,
          list: "authenticated",
          get: ({ row }) => row !== undefined && !row.name.startsWith("secret"),
          delete: "admin",
        },
      },
    }).start();
    ada = await signUp(app, "ada@example.test");
    bo = await signUp(app, "bo@elsewhere.test");
    editor = await signUp(app, "ed@example.test");
    await app.db.updateTable("user").set({ role: "user,editor" }).where("id", "=", editor.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });
  const as = (who: SignedIn) => ({ cookie: who.cookie });

  it("asks a function rule with the caller (upload) and with the file record (get, download)", async () => {
    expect((await upload(app, uploadForm(new Blob([bytes(2)]), "x.txt"), as(bo))).status).toBe(403);
    const open = (await upload(app, uploadForm(new Blob([bytes(2)]), "open.txt"), as(ada))).body;
    const secret = (await upload(app, uploadForm(new Blob([bytes(2)]), "secret.txt"), as(ada))).body;
    expect((await rpc(app, "file.get", { id: open.id }, as(bo))).status).toBe(200);
    expect(await rpc(app, "file.get", { id: secret.id }, as(bo))).toMatchObject({ status: 403, body: { message: "Permission denied" } });
    expect((await rpc(app, "file.get", { id: "00000000-0000-0000-0000-000000000000" }, as(bo))).status).toBe(403);
    expect((await request(app, "GET", open.url)).status).toBe(200);
    expect((await request(app, "GET", secret.url)).status).toBe(403);
    // `get` is not "owner", so the list is not scoped to the caller's files.
    expect((await rpc(app, "file.list", {}, as(bo))).body.length).toBe(2);
  });

  it("accepts any of the configured roles for admin, comma-separated roles included", async () => {
    const file = (await upload(app, uploadForm(new Blob([bytes(2)]), "d.txt"), as(ada))).body;
    expect(await rpc(app, "file.delete", { id: file.id }, as(ada))).toMatchObject({ status: 403, body: { message: "Requires one of the roles: editor" } });
    expect((await rpc(app, "file.delete", { id: file.id })).status).toBe(401);
    expect((await rpc(app, "file.delete", { id: file.id }, as(editor))).status).toBe(200);
  });
});
