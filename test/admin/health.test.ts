// `_admin.health` and the schema facts `_admin.meta` adds for the schema view, through handle().
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppKV, AppStorage } from "../../kernel/index.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { App } from "../../presets/trellis.js";
import { SECRET, adminApp, v1, v2 } from "./fixture.js";

const kv = { hasItem: async () => false } as unknown as AppKV;
const brokenStorage: AppStorage = {
  get: async () => {
    throw new Error("bucket unreachable: connect ECONNREFUSED");
  },
  set: async () => {},
  delete: async () => {},
};

describe("_admin.health and the schema facts", () => {
  let app: Awaited<ReturnType<ReturnType<typeof adminApp>["start"]>>;
  let admin: SignedIn;
  let alice: SignedIn;

  beforeAll(async () => {
    app = await adminApp(sqliteMemory()).start();
    admin = await signUp(app, "admin@example.test");
    alice = await signUp(app, "alice@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(() => app?.close());

  it("is refused signed out and without the role", async () => {
    expect((await rpc(app, "_admin.health", undefined)).status).toBe(401);
    expect((await rpc(app, "_admin.health", undefined, { cookie: alice.cookie })).status).toBe(403);
  });

  it("says the database is reachable, and that no kv or storage is configured", async () => {
    const { status, body } = await rpc(app, "_admin.health", undefined, { cookie: admin.cookie });
    expect(status).toBe(200);
    expect(body).toEqual({ database: { ok: true, ms: expect.any(Number) }, kv: null, storage: null });
  });

  it("reports each table's indexes, the resource's owner column, and each version's drift status", async () => {
    const meta = (await rpc(app, "_admin.meta", undefined, { cookie: admin.cookie })).body;
    expect(meta.tables.find((t: any) => t.name === "session").indexes).toEqual([
      { name: "session_pkey", columns: ["id"], kind: "primary" },
      { name: "session_token_key", columns: ["token"], kind: "unique" },
      { name: "session_userId_idx", columns: ["userId"], kind: "index" },
    ]);
    expect(meta.resources[0]).toMatchObject({ name: "post", ownerColumn: null, includable: [] });
    const migrations = (await rpc(app, "_admin.migrations", undefined, { cookie: admin.cookie })).body;
    expect(migrations.map((m: any) => m.drift)).toEqual(["verified", "verified"]);
  });
});

describe("_admin.health with a key/value store and a storage", () => {
  it("probes each: reachable, or not with the reason", async () => {
    const app = await new App({ baseUrl: ORIGIN, db: sqliteMemory(), kv, storage: brokenStorage })
      .schema(v1)
      .schema(v2)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .admin()
      .start();
    try {
      const boss = await signUp(app, "boss@example.test");
      await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
      const { body } = await rpc(app, "_admin.health", undefined, { cookie: boss.cookie });
      expect(body.database.ok).toBe(true);
      expect(body.kv).toEqual({ ok: true, ms: expect.any(Number) });
      expect(body.storage).toEqual({ ok: false, ms: expect.any(Number), error: "bucket unreachable: connect ECONNREFUSED" });
    } finally {
      await app.close();
    }
  });
});
