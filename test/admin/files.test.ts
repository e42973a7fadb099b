import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import type { AdminFilesRouter } from "../../plugins/files/index.js";
import { bytes, uploadForm } from "../files/fixture.js";
import { SECRET } from "./fixture.js";

const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .files({ attachTo: ["post"] })
  // A column of its own pointing at a file, beside the attach pivot.
  .table("profile", (t) => ({ id: t.text().primaryKey(), avatarId: t.text().nullable().references("file", "id", { onDelete: "set null" }) }))
  .build();

/** Memory storage that can be told to refuse the next delete, and says what it holds. */
function storage() {
  const inner = memoryStorage();
  const keys = new Set<string>();
  return {
    failNextDelete: false,
    keys: () => [...keys],
    get: (key: string) => inner.get(key),
    async set(key: string, value: Uint8Array) {
      await inner.set(key, value);
      keys.add(key);
    },
    async delete(key: string) {
      if (this.failNextDelete) {
        this.failNextDelete = false;
        throw new Error("the store is unreachable");
      }
      await inner.delete(key);
      keys.delete(key);
    },
  };
}

function filesAdminApp(db: TestDatabase, store: ReturnType<typeof storage>, errors: unknown[]) {
  return new App({ name: "Files Admin", baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind }, storage: store, onError: (error) => void errors.push(error) })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .files({ maxBytes: 64 * 1024 })
    .admin();
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

describe.each(families())("_admin.files on %s", (family) => {
  let db: TestDatabase;
  let store: ReturnType<typeof storage>;
  const errors: unknown[] = [];
  let app: Awaited<ReturnType<ReturnType<typeof filesAdminApp>["start"]>>;
  let admin: SignedIn;
  let alice: SignedIn;
  const as = (who: SignedIn | null): HeadersInit => (who ? { cookie: who.cookie } : {});
  const call = (name: string, input?: unknown, who: SignedIn | null = admin) => rpc(app, `_admin.files.${name}`, input, as(who));
  const client = (who: SignedIn) =>
    createClient<InferRouter<typeof app> & { _admin: { files: AdminFilesRouter } }>({ url: ORIGIN, headers: { cookie: who.cookie }, fetch: (input, init) => app.handle(new Request(input, init)) });
  const postForm = (path: string, form: FormData, who: SignedIn | null) => app.handle(new Request(`${ORIGIN}${path}`, { method: "POST", body: form, headers: as(who) }));
  const download = (id: string, who: SignedIn | null, query = "") => app.handle(new Request(`${ORIGIN}/_admin/files/${id}${query}`, { headers: as(who) }));

  beforeAll(async () => {
    db = await openDatabase(family);
    store = storage();
    app = await filesAdminApp(db, store, errors).start();
    admin = await signUp(app, "admin@example.test");
    alice = await signUp(app, "alice@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("answers 401 signed out and 403 without the role on every action, before validating input", async () => {
    for (const [name, input] of [["list", {}], ["list", { take: "lots" }], ["get", { id: "x" }], ["get", {}], ["delete", { id: "x" }], ["delete", { id: 7 }]] as const) {
      expect((await call(name, input, null)).status).toBe(401);
      const refused = await call(name, input, alice);
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe("Requires one of the roles: admin");
    }
    const form = () => uploadForm(new Blob([PNG], { type: "image/png" }), "a.png");
    expect((await postForm("/rpc/_admin/files/upload", form(), null)).status).toBe(401);
    expect((await postForm("/rpc/_admin/files/upload", form(), alice)).status).toBe(403);
    const alices = await postForm("/rpc/file/upload", form(), alice);
    const { id } = ((await alices.json()) as { json: { id: string } }).json;
    expect((await download(id, null)).status).toBe(401);
    const refused = await download(id, alice);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ message: "Requires one of the roles: admin" });
    // Validation only for an admin.
    expect((await call("list", { take: "lots" })).status).toBe(400);
    expect((await call("get", {})).status).toBe(400);
    expect((await download("no-such-file", admin)).status).toBe(404);
    await call("delete", { id });
  });

  it("uploads through the typed client as the admin, within the files plugin's maxBytes", async () => {
    const record = await client(admin)._admin.files.upload({ file: new File([PNG], "logo.png", { type: "image/png" }) });
    expect(record).toMatchObject({ name: "logo.png", type: "image/png", size: PNG.byteLength, userId: admin.userId, owner: { id: admin.userId, email: "admin@example.test" }, attachedTo: [] });
    const row = await app.db.selectFrom("file").selectAll().where("id", "=", record.id).executeTakeFirstOrThrow();
    expect(store.keys()).toContain(row.key);
    expect(await store.get(row.key)).toEqual(PNG);
    const tooBig = await postForm("/rpc/_admin/files/upload", uploadForm(new Blob([bytes(64 * 1024 + 1)]), "big.bin"), admin);
    expect(tooBig.status).toBe(413);
    await call("delete", { id: record.id });
  });

  it("lists every file, newest first, searched and paged, with its owner and the rows that point at it", async () => {
    const alicesFile = await client(alice).file.upload({ file: new File(["hello"], "notes.txt", { type: "text/plain" }) });
    const images: string[] = [];
    for (const name of ["a.png", "b.png", "c.png"]) images.push((await client(admin)._admin.files.upload({ file: new File([PNG], name, { type: "image/png" }) })).id);
    const [post] = await app.db.insertInto("post").values({ title: "hello" }).returning("id").execute();
    await app.db.insertInto("post_file").values({ fileId: images[0]!, entityId: post!.id, role: "cover", position: 0 }).execute();
    await app.db.insertInto("profile").values({ id: "p1", avatarId: images[0]! }).execute();

    const all = await call("list", {});
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(4);
    const first = all.body.data.find((file: any) => file.id === images[0]);
    expect(first.attachedTo).toEqual(expect.arrayContaining([
      { table: "post", id: post!.id, via: "post_file", role: "cover" },
      { table: "profile", id: "p1", via: "profile.avatarId", role: null },
    ]));
    expect(first.attachedTo).toHaveLength(2);
    expect(first).not.toHaveProperty("key");
    expect(all.body.data.find((file: any) => file.id === alicesFile.id)).toMatchObject({ owner: { id: alice.userId, email: "alice@example.test" }, attachedTo: [] });

    const pngs = await call("list", { search: "image/png", take: 2 });
    expect(pngs.body.count).toBe(3);
    expect(pngs.body.data).toHaveLength(2);
    const rest = await call("list", { search: "image/png", take: 2, skip: 2 });
    expect([...pngs.body.data, ...rest.body.data].map((file: any) => file.id).sort()).toEqual([...images].sort());
    expect((await call("list", { search: "notes" })).body.data.map((file: any) => file.id)).toEqual([alicesFile.id]);

    const one = await call("get", { id: images[0] });
    expect(one.body).toMatchObject({ id: images[0], name: "a.png", attachedTo: expect.any(Array) });
    expect(one.body.attachedTo).toHaveLength(2);
    expect((await call("get", { id: "missing" })).status).toBe(404);
  });

  it("serves the bytes to an admin with the files plugin's safe headers: inline only for safe types", async () => {
    const png = await client(admin)._admin.files.upload({ file: new File([PNG], "shown.png", { type: "image/png" }) });
    const svg = await client(admin)._admin.files.upload({ file: new File(["<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"], "x.svg", { type: "image/svg+xml" }) });
    const response = await download(png.id, admin);
    expect(response.status).toBe(200);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(PNG);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("content-disposition")).toMatch(/^inline/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(response.headers.get("cache-control")).toBe("private, no-cache");
    expect((await download(png.id, admin, "?download")).headers.get("content-disposition")).toMatch(/^attachment/);
    expect((await download(svg.id, admin)).headers.get("content-disposition")).toMatch(/^attachment/);
  });

  it("keeps the file table and its attach pivots read-only in _admin.data: a row removed there would strand its bytes", async () => {
    const file = await client(admin)._admin.files.upload({ file: new File([PNG], "kept.png", { type: "image/png" }) });
    const { key } = await app.db.selectFrom("file").select("key").where("id", "=", file.id).executeTakeFirstOrThrow();
    const [post] = await app.db.insertInto("post").values({ title: "with a kept image" }).returning("id").execute();
    const [link] = await app.db.insertInto("post_file").values({ fileId: file.id, entityId: post!.id }).returning("id").execute();
    const data = (name: string, input: unknown) => rpc(app, `_admin.data.${name}`, input, as(admin));
    const refused = [
      ["delete", { table: "file", where: { id: file.id } }],
      ["deleteMany", { table: "file", keys: [file.id] }],
      ["update", { table: "file", where: { id: file.id }, data: { name: "renamed.png" } }],
      ["create", { table: "file", data: { id: "f-new", key: "k-new", name: "new.png", type: "image/png", size: 1 } }],
      ["delete", { table: "post_file", where: { id: link!.id } }],
      ["deleteMany", { table: "post_file", keys: [link!.id] }],
      ["update", { table: "post_file", where: { id: link!.id }, data: { role: "cover" } }],
      ["create", { table: "post_file", data: { fileId: file.id, entityId: post!.id } }],
    ] as const;
    for (const [name, input] of refused) {
      const { status, body } = await data(name, input);
      expect([name, input.table, status], body.message).toEqual([name, input.table, 403]);
      expect(body.message).toBe(`"${input.table}" belongs to the files plugin and is read-only in _admin.data (a row removed here would leave its bytes in storage); use _admin.files.* or the Files view`);
    }
    expect(await app.db.selectFrom("file").select("name").where("id", "=", file.id).executeTakeFirst()).toEqual({ name: "kept.png" });
    expect(await app.db.selectFrom("post_file").select(["id", "role"]).where("fileId", "=", file.id).execute()).toEqual([{ id: link!.id, role: null }]);
    expect(store.keys()).toContain(key);

    // Reads stay open, and the dashboard is told not to offer writes.
    expect(await data("get", { table: "file", where: { id: file.id } })).toMatchObject({ status: 200, body: { id: file.id, name: "kept.png" } });
    expect(await data("list", { table: "post_file", where: { fileId: file.id } })).toMatchObject({ status: 200, body: { count: 1 } });
    const meta = await rpc(app, "_admin.meta", undefined, as(admin));
    const writable = Object.fromEntries((meta.body.tables as { name: string; writable: boolean }[]).map((t) => [t.name, t.writable]));
    expect(writable).toMatchObject({ file: false, post_file: false, post: true, profile: true });
  });

  it("deletes the row and its attachments, then the bytes; a store that refuses leaves an unreferenced blob, reported", async () => {
    const upload = async (name: string) => {
      const file = await client(admin)._admin.files.upload({ file: new File([PNG], name, { type: "image/png" }) });
      const { key } = await app.db.selectFrom("file").select("key").where("id", "=", file.id).executeTakeFirstOrThrow();
      return { file, key };
    };
    const { file, key } = await upload("doomed.png");
    const [post] = await app.db.insertInto("post").values({ title: "with a doomed image" }).returning("id").execute();
    await app.db.insertInto("post_file").values({ fileId: file.id, entityId: post!.id }).execute();
    await app.db.insertInto("profile").values({ id: "p2", avatarId: file.id }).execute();

    // The row goes whatever the store answers: the bytes stay behind as a blob nothing points at.
    const orphan = await upload("orphan.png");
    await app.db.insertInto("post_file").values({ fileId: orphan.file.id, entityId: post!.id }).execute();
    store.failNextDelete = true;
    errors.length = 0;
    const refused = await call("delete", { id: orphan.file.id });
    expect(refused).toMatchObject({ status: 200, body: { id: orphan.file.id, name: "orphan.png" } });
    expect(await app.db.selectFrom("file").select("id").where("id", "=", orphan.file.id).executeTakeFirst()).toBeUndefined();
    expect(await app.db.selectFrom("post_file").select("id").where("fileId", "=", orphan.file.id).execute()).toEqual([]);
    expect(store.keys()).toContain(orphan.key);
    expect(errors.some((error) => error instanceof Error && error.message === "the store is unreachable")).toBe(true);
    expect((await download(orphan.file.id, admin)).status).toBe(404);

    const deleted = await call("delete", { id: file.id });
    expect(deleted).toMatchObject({ status: 200, body: { id: file.id, name: "doomed.png" } });
    expect(await app.db.selectFrom("file").select("id").where("id", "=", file.id).executeTakeFirst()).toBeUndefined();
    expect(await app.db.selectFrom("post_file").select("id").where("fileId", "=", file.id).execute()).toEqual([]);
    expect((await app.db.selectFrom("profile").select("avatarId").where("id", "=", "p2").executeTakeFirstOrThrow()).avatarId).toBeNull();
    expect(store.keys()).not.toContain(key);
    expect((await call("get", { id: file.id })).status).toBe(404);
    expect((await download(file.id, admin)).status).toBe(404);
    expect((await call("delete", { id: file.id })).status).toBe(404);
  });
});
