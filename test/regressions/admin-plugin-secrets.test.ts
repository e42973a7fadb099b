/**
 * The admin API redacts credentials and refuses filters on them. Its list covered only the core
 * auth tables: the tables other better-auth plugins bring (two-factor's TOTP secret and backup
 * codes, the JWT plugin's private keys, an OAuth provider's client secrets and tokens) were listed
 * in the clear, and could be probed by filter and written through `_admin.data`.
 */
import { describe, expect, it } from "vitest";
import { rpc, sqliteMemory } from "../support/app.js";
import { signUp } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";

const v1 = schema("1")
  .auth()
  // As better-auth's twoFactor and jwt plugins name them.
  .table("twoFactor", (t) => ({ id: t.text().primaryKey(), secret: t.text(), backupCodes: t.text(), userId: t.text() }))
  .table("jwks", (t) => ({ id: t.text().primaryKey(), publicKey: t.text(), privateKey: t.text(), createdAt: t.timestamp() }))
  .build();

describe("secrets of better-auth plugins' tables in the admin API", () => {
  it("are redacted, cannot be filtered on, and their tables are read-only", async () => {
    const app = await new App({ baseUrl: "http://localhost:3000", db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .admin()
      .start();
    try {
      const boss = await signUp(app, "boss@example.test");
      await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
      await app.db.insertInto("twoFactor").values({ id: "t1", secret: "totp-secret-value", backupCodes: "backup-codes-value", userId: boss.userId }).execute();
      await app.db.insertInto("jwks").values({ id: "j1", publicKey: "public-key-value", privateKey: "private-key-value", createdAt: new Date().toISOString() as never }).execute();
      const as = { cookie: boss.cookie };

      const twoFactor = await rpc(app, "_admin.data.list", { table: "twoFactor" }, as);
      expect(twoFactor.status).toBe(200);
      expect(twoFactor.body.data).toEqual([{ id: "t1", secret: "[redacted]", backupCodes: "[redacted]", userId: boss.userId }]);
      const jwks = await rpc(app, "_admin.data.list", { table: "jwks" }, as);
      expect(jwks.body.data[0]).toMatchObject({ id: "j1", publicKey: "public-key-value", privateKey: "[redacted]" });

      const probe = await rpc(app, "_admin.data.list", { table: "twoFactor", where: { secret: { startsWith: "t" } } }, as);
      expect(probe.status).toBe(400);
      expect(probe.body.message).toBe('where.secret: "secret" is a secret column of "twoFactor" and cannot be filtered on');
      expect((await rpc(app, "_admin.data.update", { table: "twoFactor", where: { id: "t1" }, data: { secret: "mine" } }, as)).status).toBe(403);
      expect((await rpc(app, "_admin.data.delete", { table: "jwks", where: { id: "j1" } }, as)).status).toBe(403);
      expect(await app.db.selectFrom("twoFactor").select("secret").executeTakeFirstOrThrow()).toEqual({ secret: "totp-secret-value" });
    } finally {
      await app.close();
    }
  });
});
