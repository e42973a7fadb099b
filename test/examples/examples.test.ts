import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { createBlog } from "../../examples/blog/app.js";
import { createSlimApp } from "../../examples/custom-preset/app.js";
import { createAppWithRequestIds } from "../../examples/in-house-plugin/app.js";
import { request, rpc, sqliteMemory } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";

describe("examples/blog: the App facade on the default preset, embedded database", () => {
  let app: Awaited<ReturnType<ReturnType<typeof createBlog>["start"]>>;
  let ada: SignedIn;
  let bo: SignedIn;
  beforeAll(async () => {
    app = await createBlog(embedded({ dataDir: "memory://" }), { onError: () => {} }).start();
    ada = await signUp(app, "ada@example.test");
    bo = await signUp(app, "bo@example.test");
  });
  afterAll(async () => {
    await app?.close();
  });

  it("mounts every first-party plugin in a fixed, resolved order", () => {
    expect(app.describe().plugins).toMatchSnapshot();
    expect(app.describe().procedures).toEqual(expect.arrayContaining(["me", "post.publish", "post.list", "comment.delete"]));
  });

  it("migrated every schema version", async () => {
    const { results } = await app.migrator.migrateToLatest();
    expect(results).toEqual([]);
    const migrations = await app.migrator.getMigrations();
    expect(migrations.map((m) => [m.name, m.executedAt !== undefined])).toEqual([
      ["0001_1", true],
      ["0002_2", true],
      ["0003_3", true],
    ]);
  });

  it("lets a signed-in author write, publish and comment, and protects posts by owner", async () => {
    const created = await rpc(app, "post.create", { title: "Hello", slug: "hello" }, { cookie: ada.cookie });
    expect(created).toMatchObject({ status: 200, body: { title: "Hello", authorId: ada.userId, status: "draft" } });
    const id = created.body.id;
    expect((await rpc(app, "post.update", { where: { id }, data: { title: "Mine now" } }, { cookie: bo.cookie })).status).toBe(404);
    expect((await rpc(app, "post.publish", { id }, { cookie: ada.cookie })).body).toEqual({ id, status: "published" });
    expect((await rpc(app, "comment.create", { postId: id, body: "Nice" }, { cookie: bo.cookie })).status).toBe(200);
    const withComments = await rpc(app, "post.get", { where: { id }, include: { comments: true } });
    expect(withComments.body.comments).toHaveLength(1);
    expect(await request(app, "GET", "/")).toMatchObject({ status: 200, body: { publishedPosts: 1, signedIn: false } });
    expect((await rpc(app, "me", undefined, { cookie: ada.cookie })).body).toEqual({ id: ada.userId, email: "ada@example.test" });
  });

  it("uploads an image attached to the author's post, lists it on the post and serves it to anyone", async () => {
    // Published: a draft's images are its author's like the draft (listing them is 403 to others).
    const post = (await rpc(app, "post.create", { title: "With a picture", status: "published" }, { cookie: ada.cookie })).body;
    const form = new FormData();
    form.set("data", JSON.stringify({ json: { file: {}, attach: { table: "post", entityId: post.id, role: "cover" } }, maps: [["file"]] }));
    form.set("0", new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: "image/png" }), "cover.png");
    const sent = await app.handle(new Request("http://localhost:3000/rpc/file/upload", { method: "POST", headers: { cookie: ada.cookie }, body: form }));
    expect(sent.status).toBe(200);
    const image = (await sent.json()).json;
    expect(image).toMatchObject({ name: "cover.png", type: "image/png", size: 4, userId: ada.userId });
    const listed = await rpc(app, "file.list", { attachedTo: { table: "post", entityId: post.id } });
    expect(listed.body.map((file: { id: string }) => file.id)).toEqual([image.id]);
    const draft = (await rpc(app, "post.create", { title: "Draft" }, { cookie: ada.cookie })).body;
    expect((await rpc(app, "file.list", { attachedTo: { table: "post", entityId: draft.id } })).status).toBe(403);
    const download = await request(app, "GET", image.url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/png");
    // Bo may not attach his image to Ada's post, nor upload anything but images.
    const bos = await app.client({ cookie: bo.cookie }).file.upload({ file: new File(["x"], "b.png", { type: "image/png" }) });
    expect((await rpc(app, "file.attach", { fileId: bos.id, table: "post", entityId: post.id }, { cookie: bo.cookie })).status).toBe(404);
    expect(await app.client({ cookie: bo.cookie }).file.upload({ file: new File(["<p>"], "x.html", { type: "text/html" }) }).catch((error) => error.status)).toBe(415);
  });
});

describe("examples/custom-preset: a kernel with RPC and health only", () => {
  const app = createSlimApp(sqliteMemory());
  afterAll(() => app.close());

  it("serves procedures, raw routes and health, and nothing it did not register", async () => {
    expect((await rpc(app, "math.add", { a: 2, b: 3 })).body).toBe(5);
    expect((await request(app, "GET", "/version")).body).toEqual({ version: "1.0.0" });
    expect((await request(app, "GET", "/health")).status).toBe(200);
    expect((await request(app, "POST", "/api/auth/sign-in/email")).status).toBe(404);
    const withOrigin = await rpc(app, "math.add", { a: 1, b: 1 }, { origin: "https://x.test" });
    expect(withOrigin.headers.get("access-control-allow-origin")).toBeNull();
    expect(app.describe().plugins.map((p) => p.name)).toEqual(["health"]);
  });
});

describe("examples/in-house-plugin: a plugin on trellis/kernel alone", () => {
  const app = createAppWithRequestIds(sqliteMemory()).build();
  afterAll(() => app.close());

  it("adds a middleware, a context field and a procedure that agree on one id", async () => {
    const result = await rpc(app, "requestId.current", undefined, { "x-request-id": "req-42" });
    expect(result.body).toBe("req-42");
    expect(result.headers.get("x-request-id")).toBe("req-42");
    const generated = await rpc(app, "requestId.current", undefined, { "x-request-id": "bad id with spaces" });
    expect(generated.body).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.headers.get("x-request-id")).toBe(generated.body);
  });
});
