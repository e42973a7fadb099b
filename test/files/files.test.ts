import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { bytes, filesApp, trackedStorage, upload, uploadForm } from "./fixture.js";

for (const family of families()) {
  describe(`files through the front door (${family})`, () => {
    let database: TestDatabase;
    let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
    const storage = trackedStorage();
    let ada: SignedIn;
    let bo: SignedIn;
    let root: SignedIn;
    beforeAll(async () => {
      database = await openDatabase(family);
      app = await filesApp(database, { storage }).start();
      ada = await signUp(app, "ada@example.test");
      bo = await signUp(app, "bo@example.test");
      root = await signUp(app, "root@example.test");
      await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", root.userId).execute();
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await database?.close();
    });

    const as = (who: SignedIn) => ({ cookie: who.cookie });

    it("takes a File through the typed client and returns the record, never the storage key", async () => {
      const client = app.client(as(ada));
      const record = await client.file.upload({ file: new File([bytes(1000)], "photo.png", { type: "image/png" }) });
      expect(Object.keys(record).sort()).toEqual(["createdAt", "id", "name", "size", "type", "updatedAt", "url", "userId"]);
      expect(record).toMatchObject({ name: "photo.png", type: "image/png", size: 1000, userId: ada.userId, url: `/files/${record.id}` });
      expect(record.createdAt).toBeInstanceOf(Date);
      expect(await client.file.get({ id: record.id })).toEqual(record);
      const download = await app.handle(new Request(`${ORIGIN}${record.url}`, { headers: as(ada) }));
      expect(download.status).toBe(200);
      expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes(1000));
    });

    it("accepts a raw multipart/form-data upload as curl -F sends it", async () => {
      const sent = await upload(app, uploadForm(new Blob([bytes(5000, 9)], { type: "application/pdf" }), "report.pdf"), as(ada));
      expect(sent).toMatchObject({ status: 200, body: { name: "report.pdf", type: "application/pdf", size: 5000, userId: ada.userId } });
      expect(JSON.stringify(sent.body)).not.toMatch(/files\/[0-9a-f]{32}/);
      const row = await app.db.selectFrom("file").select(["key"]).where("id", "=", sent.body.id).executeTakeFirstOrThrow();
      expect(row.key).not.toContain(sent.body.id);
      expect(await storage.get(row.key)).toEqual(bytes(5000, 9));
    });

    it("answers 401 signed out on file.*, and 404 to a non-owner on every path, exactly as for a missing id", async () => {
      const mine = (await upload(app, uploadForm(new Blob([bytes(10)]), "mine.bin"), as(ada))).body;
      const post = (await rpc(app, "post.create", { title: "bo's" }, as(bo))).body;
      const missing = "00000000-0000-0000-0000-000000000000";
      for (const name of ["file.get", "file.delete"]) {
        expect((await rpc(app, name, { id: mine.id })).status).toBe(401);
        const foreign = await rpc(app, name, { id: mine.id }, as(bo));
        const absent = await rpc(app, name, { id: missing }, as(bo));
        expect(foreign).toMatchObject({ status: 404, body: { code: "NOT_FOUND", message: "No file matches" } });
        expect(foreign.body).toEqual(absent.body);
      }
      expect((await rpc(app, "file.list", {})).status).toBe(401);
      expect((await upload(app, uploadForm(new Blob([bytes(1)]), "x"))).status).toBe(401);
      for (const name of ["file.attach", "file.detach"]) {
        const foreign = await rpc(app, name, { fileId: mine.id, table: "post", entityId: post.id }, as(bo));
        const absent = await rpc(app, name, { fileId: missing, table: "post", entityId: post.id }, as(bo));
        expect(foreign).toMatchObject({ status: 404, body: { message: "No file matches" } });
        expect(foreign.body).toEqual(absent.body);
      }
      for (const headers of [{}, as(bo)]) {
        const foreign = await request(app, "GET", mine.url, { headers });
        const absent = await request(app, "GET", `/files/${missing}`, { headers });
        expect(foreign).toMatchObject({ status: 404, body: { code: "NOT_FOUND", message: "No file matches" } });
        expect(absent.body).toEqual(foreign.body);
      }
      // A role in `roles` reaches every file.
      expect((await rpc(app, "file.get", { id: mine.id }, as(root))).status).toBe(200);
      expect((await request(app, "GET", mine.url, { headers: as(root) })).status).toBe(200);
    });

    it("lists the caller's own files (every file for a role), filtered, newest first; the key is not filterable", async () => {
      const mine = await rpc(app, "file.list", {}, as(ada));
      expect(mine.status).toBe(200);
      expect(mine.body.length).toBeGreaterThan(0);
      expect(mine.body.every((file: { userId: string }) => file.userId === ada.userId)).toBe(true);
      const dates = mine.body.map((file: { createdAt: string }) => file.createdAt);
      expect([...dates].sort().reverse()).toEqual(dates);
      expect((await rpc(app, "file.list", {}, as(bo))).body).toEqual([]);
      const all = await rpc(app, "file.list", {}, as(root));
      expect(all.body.length).toBe(mine.body.length);
      const pdfs = await rpc(app, "file.list", { where: { type: "application/pdf" } }, as(ada));
      expect(pdfs.body.map((file: { name: string }) => file.name)).toEqual(["report.pdf"]);
      expect(await rpc(app, "file.list", { where: { key: { startsWith: "files/" } } }, as(ada))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/"key" is not a filterable/) } });
      // file.list filters files by their own columns: a relation filter reaches no other table.
      expect(await rpc(app, "file.list", { where: { user: { is: { email: { startsWith: "a" } } } } }, as(ada))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/relation filters cannot reach table "user"/) } });
      expect(await rpc(app, "file.list", { where: { OR: [{ name: "x" }, { key: "y" }] } }, as(ada))).toMatchObject({ status: 400 });
      expect(await rpc(app, "file.list", { where: { nope: 1 } }, as(ada))).toMatchObject({ status: 400 });
      expect(await rpc(app, "file.list", { take: 101 }, as(ada))).toMatchObject({ status: 400, body: { message: "take must be at most 100" } });
    });

    it("attaches to rows the caller may update, lists by position, detaches, and refuses unknown tables", async () => {
      const post = (await rpc(app, "post.create", { title: "ada's" }, as(ada))).body;
      const other = (await rpc(app, "post.create", { title: "bo's" }, as(bo))).body;
      const a = (await upload(app, uploadForm(new Blob([bytes(3)]), "a.jpg"), as(ada))).body;
      const b = (await upload(app, uploadForm(new Blob([bytes(4)]), "b.jpg"), as(ada), )).body;
      expect(await rpc(app, "file.attach", { fileId: a.id, table: "post", entityId: post.id, role: "cover", position: 2 }, as(ada))).toMatchObject({
        status: 200,
        body: { fileId: a.id, table: "post", entityId: post.id, role: "cover", position: 2 },
      });
      expect((await rpc(app, "file.attach", { fileId: b.id, table: "post", entityId: post.id, position: 1 }, as(ada))).status).toBe(200);
      const listed = await rpc(app, "file.list", { attachedTo: { table: "post", entityId: post.id } }, as(ada));
      expect(listed.body.map((file: { id: string }) => file.id)).toEqual([b.id, a.id]);
      expect(listed.body.map((file: { attachment: unknown }) => file.attachment)).toEqual([
        { role: null, position: 1 },
        { role: "cover", position: 2 },
      ]);
      // Bo may not update Ada's post (resource rule "owner"): 404 as post.update answers.
      const own = (await upload(app, uploadForm(new Blob([bytes(2)]), "bo.jpg"), as(bo))).body;
      expect(await rpc(app, "file.attach", { fileId: own.id, table: "post", entityId: post.id }, as(bo))).toMatchObject({ status: 404, body: { message: "No post matches" } });
      expect((await rpc(app, "file.attach", { fileId: own.id, table: "post", entityId: other.id }, as(bo))).status).toBe(200);
      expect(await rpc(app, "file.attach", { fileId: a.id, table: "user", entityId: "x" }, as(ada))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/cannot attach to "user"; attachable: post, tag/) } });
      expect(await rpc(app, "file.attach", { fileId: a.id, table: "post", entityId: "not-a-number" }, as(ada))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/entityId/) } });
      // A table without a resource: the row must exist.
      expect(await rpc(app, "file.attach", { fileId: a.id, table: "tag", entityId: "none" }, as(ada))).toMatchObject({ status: 404, body: { message: "No tag matches" } });
      await app.db.insertInto("tag").values({ id: "news", label: "News" }).execute();
      expect((await rpc(app, "file.attach", { fileId: a.id, table: "tag", entityId: "news" }, as(ada))).status).toBe(200);

      expect((await rpc(app, "file.detach", { fileId: b.id, table: "post", entityId: post.id }, as(ada))).body).toEqual({ fileId: b.id, table: "post", entityId: post.id });
      expect((await rpc(app, "file.detach", { fileId: b.id, table: "post", entityId: post.id }, as(ada))).status).toBe(404);
      expect((await rpc(app, "file.list", { attachedTo: { table: "post", entityId: post.id } }, as(ada))).body.map((file: { id: string }) => file.id)).toEqual([a.id]);
    });

    it("uploads and attaches in one call, checking the target first and leaving nothing behind when refused", async () => {
      const post = (await rpc(app, "post.create", { title: "with cover" }, as(ada))).body;
      const before = storage.keys().length;
      const refused = await upload(app, uploadForm(new Blob([bytes(8)]), "c.png"), as(bo)).then(() => upload(app, uploadForm(new Blob([bytes(8)]), "c.png", { attach: { table: "post", entityId: post.id } }), as(bo)));
      expect(refused.status).toBe(404);
      expect(storage.keys().length).toBe(before + 1);
      const sent = await upload(app, uploadForm(new Blob([bytes(8)]), "cover.png", { attach: { table: "post", entityId: post.id, role: "cover" } }), as(ada));
      expect(sent.status).toBe(200);
      const attached = await rpc(app, "file.list", { attachedTo: { table: "post", entityId: post.id } }, as(ada));
      expect(attached.body.map((file: { id: string }) => file.id)).toEqual([sent.body.id]);
    });

    it("deletes the pivot rows, the row and the bytes", async () => {
      const post = (await rpc(app, "post.create", { title: "gone" }, as(ada))).body;
      const sent = (await upload(app, uploadForm(new Blob([bytes(16)]), "gone.png", { attach: { table: "post", entityId: post.id } }), as(ada))).body;
      const { key } = await app.db.selectFrom("file").select("key").where("id", "=", sent.id).executeTakeFirstOrThrow();
      const deleted = await rpc(app, "file.delete", { id: sent.id }, as(ada));
      expect(deleted).toMatchObject({ status: 200, body: { id: sent.id, name: "gone.png" } });
      expect(await storage.get(key)).toBeNull();
      expect(await app.db.selectFrom("post_file").selectAll().where("fileId", "=", sent.id).execute()).toEqual([]);
      expect((await rpc(app, "file.get", { id: sent.id }, as(ada))).status).toBe(404);
      expect((await request(app, "GET", sent.url, { headers: as(ada) })).status).toBe(404);
    });
  });
}
