// Property-level writes: which columns a caller can set, whatever the body says.
import Database from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteDialect } from "../../kernel/db/dialect/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth()
  .table("doc", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    ownerId: t.text().nullable().references("user", "id"),
    approved: t.boolean().default(false),
    meta: t.jsonb().nullable(),
  }))
  .table("profile", (t) => ({ id: t.serial().primaryKey(), bio: t.text().nullable(), karma: t.integer().default(0) }))
  .build();

function createApp() {
  const database = new Database(":memory:") as unknown as SqliteDatabase;
  return new App({ baseUrl: ORIGIN, db: { dialect: sqliteDialect({ database }), kind: "sqlite" } })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("doc", {
      ownerColumn: "ownerId",
      readonly: ["approved"],
      permissions: { create: "authenticated", update: "owner", delete: "owner" },
    })
    .resource("profile", { writable: ["bio"] });
}

type Built = Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;

describe("property-level writes (hostile bodies; these rules already hold)", () => {
  let app: Built;
  let alice: SignedIn;
  let bob: SignedIn;
  const as = (user: SignedIn) => ({ cookie: user.cookie });
  beforeAll(async () => {
    app = await createApp().start();
    alice = await signUp(app, "alice@example.test");
    bob = await signUp(app, "bob@example.test");
  });
  afterAll(() => app?.close());

  it("drops the key, the owner and readonly columns from a create body", async () => {
    const created = await rpc(app, "doc.create", { id: 777, title: "t", ownerId: bob.userId, approved: true }, as(alice));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ title: "t", ownerId: alice.userId, approved: false });
    expect(created.body.id).not.toBe(777);
  });

  it("drops the key, the owner and readonly columns from an update's data, and answers 400 when nothing is left", async () => {
    const { body: doc } = await rpc(app, "doc.create", { title: "mine" }, as(alice));
    const moved = await rpc(app, "doc.update", { where: { id: doc.id }, data: { id: 999, ownerId: bob.userId, approved: true, title: "still mine" } }, as(alice));
    expect(moved.body).toMatchObject({ id: doc.id, ownerId: alice.userId, approved: false, title: "still mine" });
    const nothing = await rpc(app, "doc.update", { where: { id: doc.id }, data: { ownerId: bob.userId, approved: true } }, as(alice));
    expect(nothing.status).toBe(400);
    expect(nothing.body.message).toMatch(/Nothing to update/);
  });

  it("keeps to the writable allowlist", async () => {
    const created = await rpc(app, "profile.create", { bio: "hi", karma: 1_000_000, id: 5 });
    expect(created.body).toMatchObject({ bio: "hi", karma: 0 });
    const updated = await rpc(app, "profile.update", { where: { id: created.body.id }, data: { karma: 9, bio: "new" } });
    expect(updated.body).toMatchObject({ bio: "new", karma: 0 });
  });

  it("ignores prototype keys in a body and never pollutes Object.prototype", async () => {
    const raw = '{"json":{"title":"proto","__proto__":{"approved":true,"polluted":1},"constructor":{"prototype":{"polluted":1}}}}';
    const response = await app.handle(
      new Request(`${ORIGIN}/rpc/doc/create`, { method: "POST", headers: { "content-type": "application/json", cookie: alice.cookie }, body: raw }),
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { json: { approved: boolean } }).json.approved).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A jsonb value keeps such keys as data, not as a prototype.
    const stored = await rpc(app, "doc.create", { title: "j", meta: JSON.parse('{"__proto__":{"x":1}}') }, as(alice));
    expect(stored.status).toBe(200);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("lets no user give themselves a role, a ban state or a verified email through the auth routes", async () => {
    const signUpAsAdmin = await app.handle(
      new Request(`${ORIGIN}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ email: "mallory@example.test", password: "correct-horse-battery-staple", name: "m", role: "admin", emailVerified: true }),
      }),
    );
    expect(signUpAsAdmin.status).toBe(400);
    const verifiedAtSignUp = await app.handle(
      new Request(`${ORIGIN}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ email: "trudy@example.test", password: "correct-horse-battery-staple", name: "t", emailVerified: true, banned: true }),
      }),
    );
    expect(verifiedAtSignUp.status).toBe(200);
    const trudy = await app.db.selectFrom("user").select(["emailVerified", "banned", "role"]).where("email", "=", "trudy@example.test").executeTakeFirstOrThrow();
    expect(trudy).toEqual({ emailVerified: 0, banned: 0, role: "user" });
    const update = (body: unknown) =>
      app.handle(
        new Request(`${ORIGIN}/api/auth/update-user`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: ORIGIN, cookie: alice.cookie },
          body: JSON.stringify(body),
        }),
      );
    expect((await update({ role: "admin" })).status).toBe(400);
    const flags = await update({ banned: false, banExpires: null, emailVerified: true });
    expect(flags.status).toBe(400);
    expect(await flags.json()).toMatchObject({ message: "No fields to update" });
    const row = await app.db.selectFrom("user").select(["role", "emailVerified"]).where("id", "=", alice.userId).executeTakeFirstOrThrow();
    expect(row.role).toBe("user");
    expect(await app.db.selectFrom("user").select("id").where("email", "=", "mallory@example.test").execute()).toEqual([]);
  });
});
