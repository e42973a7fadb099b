import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InferRouter } from "trellis";
import { testApp, type Actor, type TestApp } from "trellis/testing";
import { createBlog } from "../../examples/blog/app.js";
import { createSlimApp } from "../../examples/custom-preset/app.js";
import { createAppWithRequestIds } from "../../examples/in-house-plugin/app.js";
import { request, rpc, sqliteMemory } from "../support/app.js";

describe("examples/blog: the App facade on the default preset, embedded database, tested with trellis/testing", () => {
  let t: TestApp<InferRouter<ReturnType<typeof createBlog>>>;
  let ada: Actor<InferRouter<ReturnType<typeof createBlog>>>;
  let bo: Actor<InferRouter<ReturnType<typeof createBlog>>>;
  beforeAll(async () => {
    t = await testApp(({ db }) => createBlog(db, { onError: () => {} }));
    ada = await t.signUp({ email: "ada@example.test" });
    bo = await t.signUp({ email: "bo@example.test" });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("mounts every first-party plugin in a fixed, resolved order", () => {
    expect(t.app.describe().plugins).toMatchSnapshot();
    expect(t.app.describe().procedures).toEqual(expect.arrayContaining(["me", "post.publish", "post.list", "comment.delete"]));
  });

  it("migrated every schema version", async () => {
    const { results } = await t.app.migrator.migrateToLatest();
    expect(results).toEqual([]);
    const migrations = await t.app.migrator.getMigrations();
    expect(migrations.map((m) => [m.name, m.executedAt !== undefined])).toEqual([
      ["0001_1", true],
      ["0002_2", true],
      ["0003_3", true],
      ["0004_4", true],
    ]);
  });

  it("lets a signed-in author write, publish and comment, and protects posts by owner", async () => {
    const created = await ada.client.post.create({ title: "Hello", slug: "hello" });
    expect(created).toMatchObject({ title: "Hello", authorId: ada.user.id, status: "draft" });
    const id = created.id;
    await expect(bo.client.post.update({ where: { id }, data: { title: "Mine now" } })).rejects.toMatchObject({ status: 404 });
    expect(await ada.client.post.publish({ id })).toEqual({ id, status: "published" });
    await bo.client.comment.create({ postId: id, body: "Nice" });
    const withComments = await t.anonymous.client.post.get({ where: { id }, include: { comments: true } });
    expect(withComments.comments).toHaveLength(1);
    const home = await t.anonymous.fetch("/");
    expect(home.status).toBe(200);
    expect(await home.json()).toMatchObject({ publishedPosts: 1, signedIn: false });
    expect(await ada.client.me()).toEqual({ id: ada.user.id, email: "ada@example.test" });
  });

  it("searches posts by words, best match first, drafts only for their author, on the list and the MCP tool", async () => {
    const body = await ada.client.post.create({ title: "Garden notes", body: "Tomatoes and compost", status: "published" });
    const title = await ada.client.post.create({ title: "Composting tomatoes", body: "How to", status: "published" });
    const draft = await ada.client.post.create({ title: "Compost secrets", body: "draft" });
    expect((await t.anonymous.client.post.list({ search: "compost tomato" })).map((post) => post.id)).toEqual([title.id, body.id]);
    expect((await ada.client.post.list({ search: "secrets" })).map((post) => post.id)).toEqual([draft.id]);
    expect(await bo.client.post.list({ search: "secrets" })).toEqual([]);
    expect((await t.anonymous.client.post.search({ query: "composting" })).map((post) => post.id)).toEqual([title.id, body.id]);
  });

  it("uploads an image attached to the author's post, lists it on the post and serves it to anyone", async () => {
    // Published: a draft's images are its author's like the draft (listing them is 403 to others).
    const post = await ada.client.post.create({ title: "With a picture", status: "published" });
    const image = await ada.client.file.upload({ file: new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "cover.png", { type: "image/png" }), attach: { table: "post", entityId: post.id, role: "cover" } });
    expect(image).toMatchObject({ name: "cover.png", type: "image/png", size: 4, userId: ada.user.id });
    expect(image.variants).toEqual({ thumb: `/files/${image.id}?variant=thumb`, large: `/files/${image.id}?variant=large` });
    const listed = await t.anonymous.client.file.list({ attachedTo: { table: "post", entityId: post.id } });
    expect(listed.map((file) => file.id)).toEqual([image.id]);
    const draft = await ada.client.post.create({ title: "Draft" });
    await expect(t.anonymous.client.file.list({ attachedTo: { table: "post", entityId: draft.id } })).rejects.toMatchObject({ status: 403 });
    const download = await t.anonymous.fetch(image.url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/png");
    // Bo may not attach his image to Ada's post, nor upload anything but images.
    const bos = await bo.client.file.upload({ file: new File(["x"], "b.png", { type: "image/png" }) });
    await expect(bo.client.file.attach({ fileId: bos.id, table: "post", entityId: post.id })).rejects.toMatchObject({ status: 404 });
    await expect(bo.client.file.upload({ file: new File(["<p>"], "x.html", { type: "text/html" }) })).rejects.toMatchObject({ status: 415 });
  });

  it("chats beside a post: anyone reads the room and who is there, only the signed-in talk, comments arrive", async () => {
    const post = await ada.client.post.create({ title: "Talk about it", status: "published" });
    const channel = `post:${post.id}`;
    const stream = await t.anonymous.fetch(`/channels/sse?channel=${channel}`);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const frame = async (type: string): Promise<any> => {
      for (;;) {
        const at = text.indexOf("\n\n");
        if (at >= 0) {
          const parsed = JSON.parse(text.slice(6, at));
          text = text.slice(at + 2);
          if (parsed.type === type) return parsed;
          continue;
        }
        text += decoder.decode((await reader.read()).value);
      }
    };
    const { id, token } = await frame("ready");
    expect(await frame("presence")).toEqual({ type: "presence", channel, event: "sync", state: {} });
    const send = (actor: { fetch: typeof t.anonymous.fetch }, body: unknown) =>
      actor.fetch(`/channels/sse/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await send(t.anonymous, { type: "track", channel, state: { name: "guest" } })).status).toBe(204);
    expect(await frame("presence")).toMatchObject({ event: "join", key: id, state: { name: "guest" } });
    const refused = await send(t.anonymous, { type: "send", channel, event: "chat", payload: { text: "hi" } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: "UNAUTHORIZED", message: `Sign in to send on "${channel}"` });
    const comment = await bo.client.comment.create({ postId: post.id, body: "Nice" });
    expect(await frame("message")).toMatchObject({ channel, event: "change", payload: { op: "insert", row: { id: comment.id, postId: post.id, authorId: bo.user.id, body: "Nice" } } });
    await reader.cancel();
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
