import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc, request, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

/** A list rule that returns a `where`: the caller sees only the rows matching it, in SQL. */
const v1 = schema("1")
  .auth()
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    status: t.text().enum(["draft", "published"]).default("draft"),
    authorId: t.text().references("user", "id"),
  }))
  .build();

describe("a list rule returning a where", () => {
  let app: Awaited<ReturnType<typeof start>>;
  let ada: SignedIn;
  let bo: SignedIn;
  const start = () =>
    new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .resource("post", {
        ownerColumn: "authorId",
        permissions: {
          list: ({ context }) => (context.user ? { OR: [{ status: "published" }, { authorId: context.user.id }] } : { status: "published" }),
          create: "authenticated",
        },
      })
      .openapi()
      .start();
  beforeAll(async () => {
    app = await start();
    ada = await signUp(app, "ada@example.test");
    bo = await signUp(app, "bo@example.test");
    for (const [title, status] of [["draft 1", "draft"], ["public 1", "published"], ["draft 2", "draft"], ["public 2", "published"]]) {
      await rpc(app, "post.create", { title, status }, { cookie: ada.cookie, origin: ORIGIN });
    }
  }, 60_000);
  afterAll(() => app?.close());

  const titles = (body: { title: string }[]) => body.map((post) => post.title);

  it("hides drafts from anonymous callers, on RPC and on REST, and take counts only visible rows", async () => {
    expect(titles((await rpc(app, "post.list", { orderBy: [{ id: "asc" }] })).body)).toEqual(["public 1", "public 2"]);
    expect(titles((await request(app, "GET", "/rest/post?take=1")).body)).toEqual(["public 1"]);
    // The caller's own where cannot widen it.
    expect(titles((await rpc(app, "post.list", { where: { status: "draft" } })).body)).toEqual([]);
  });

  it("shows the author their drafts, and nobody else's", async () => {
    expect(titles((await rpc(app, "post.list", { orderBy: [{ id: "asc" }] }, { cookie: ada.cookie })).body)).toEqual(["draft 1", "public 1", "draft 2", "public 2"]);
    expect(titles((await rpc(app, "post.list", { orderBy: [{ id: "asc" }] }, { cookie: bo.cookie })).body)).toEqual(["public 1", "public 2"]);
  });
});
