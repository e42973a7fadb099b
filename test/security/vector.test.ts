// nearest under owner scope and list rules: a vector search ranks only the rows the caller may list,
// and its arguments never reach SQL as text.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";

const v1 = schema("1")
  .auth()
  .table("memo", (t) => ({ id: t.serial().primaryKey(), text: t.text(), userId: t.text(), embedding: t.vector(2).index() }))
  .table("doc", (t) => ({ id: t.serial().primaryKey(), text: t.text(), published: t.boolean(), embedding: t.vector(2) }))
  .build();

describe("vector search red team", () => {
  let db: TestDatabase;
  let app: any;
  let alice: SignedIn;
  let bob: SignedIn;
  const as = (user: SignedIn): HeadersInit => ({ cookie: user.cookie });

  beforeAll(async () => {
    db = await openDatabase("pglite");
    app = await new App({ name: "vectors", baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind } })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .resource("memo", { ownerColumn: "userId", permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" } })
      .resource("doc", { permissions: { list: () => ({ published: true }) } })
      .start();
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "bob@example.test");
    // Bob's memo sits exactly on the searched vector; Alice's are further away.
    await rpc(app, "memo.create", { text: "bob secret", embedding: [1, 0] }, as(bob));
    for (const [i, embedding] of [[0, [0, 1]], [1, [0.5, 0.5]]] as const) await rpc(app, "memo.create", { text: `alice ${i}`, embedding }, as(alice));
    await rpc(app, "doc.create", { text: "draft", published: false, embedding: [1, 0] });
    await rpc(app, "doc.create", { text: "public", published: true, embedding: [0, 1] });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("ranks only the caller's own rows: another user's nearer row is never returned, k stays within scope", async () => {
    const near = await rpc(app, "memo.list", { nearest: { column: "embedding", vector: [1, 0], k: 10 } }, as(alice));
    expect(near.status).toBe(200);
    expect(near.body.map((row: any) => row.text)).toEqual(["alice 1", "alice 0"]);
    // A where that tries to widen the scope is ANDed with it, not ORed.
    const widened = await rpc(app, "memo.list", { where: { OR: [{ userId: bob.userId }, { text: "bob secret" }] }, nearest: { column: "embedding", vector: [1, 0], k: 10 } }, as(alice));
    expect(widened.body).toEqual([]);
    expect((await rpc(app, "memo.list", { nearest: { column: "embedding", vector: [1, 0], k: 1 } })).status).toBe(401);
  });

  it("applies a list rule's where before ranking", async () => {
    const near = await rpc(app, "doc.list", { nearest: { column: "embedding", vector: [1, 0], k: 5 } });
    expect(near.body.map((row: any) => row.text)).toEqual(["public"]);
  });

  it("never lets nearest's arguments reach SQL as text", async () => {
    const attempts = [
      { column: 'embedding" <=> null; drop table memo; --', vector: [1, 0], k: 1 },
      { column: "embedding", vector: ["1); drop table memo; --", 0], k: 1 },
      { column: "embedding", vector: "[1,0]", k: 1 },
      { column: "embedding", vector: [1, 0], k: "1; drop table memo" },
      { column: "userId", vector: [1, 0], k: 1 },
      { column: "__proto__", vector: [1, 0], k: 1 },
    ];
    for (const nearest of attempts) {
      const answer = await rpc(app, "memo.list", { nearest }, as(alice));
      expect(answer.status, JSON.stringify(nearest)).toBe(400);
    }
    expect((await rpc(app, "memo.list", {}, as(alice))).body).toHaveLength(2);
  });
});
