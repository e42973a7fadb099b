/**
 * `verification.identifier` holds `reset-password:<token>` (and magic-link tokens): whoever read it
 * could reset any user's password, other admins' included. It was listed in the clear by
 * `_admin.data` and the exports, and could be probed with `startsWith`. Now the auth library stores
 * identifiers hashed, and the admin API redacts the column and refuses it in filters and orderings,
 * like `verification.value`.
 */
import { describe, expect, it } from "vitest";
import { request, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signIn, signUp } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";

describe("reset tokens in verification.identifier", () => {
  it("are stored hashed, redacted in admin data and exports, and cannot be probed by filter", async () => {
    let token = "";
    const app = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(schema("1").auth().build())
      .auth({
        secret: "a-test-secret-that-is-long-enough-0123456789",
        emailAndPassword: { enabled: true, sendResetPassword: async ({ token: sent }) => void (token = sent) },
      })
      .admin({ ui: false })
      .start();
    try {
      const boss = await signUp(app, "boss@example.test");
      await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
      await signUp(app, "victim@example.test");
      const asked = await request(app, "POST", "/api/auth/request-password-reset", {
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ email: "victim@example.test", redirectTo: "/reset" }),
      });
      expect(asked.status).toBe(200);
      expect(token).not.toBe("");

      const stored = await app.db.selectFrom("verification").select("identifier").execute();
      expect(stored).toHaveLength(1);
      expect(stored[0]!.identifier).not.toContain(token);

      const as = { cookie: boss.cookie };
      const listed = await rpc(app, "_admin.data.list", { table: "verification" }, as);
      expect(listed.status).toBe(200);
      expect(listed.body.data[0]).toMatchObject({ identifier: "[redacted]", value: "[redacted]" });
      for (const input of [
        { table: "verification", where: { identifier: { startsWith: "reset-password:" } } },
        { table: "verification", orderBy: [{ identifier: "asc" }] },
      ]) {
        const probe = await rpc(app, "_admin.data.list", input, as);
        expect(probe.status, JSON.stringify(input)).toBe(400);
        expect(probe.body.message).toMatch(/"identifier" is a secret column of "verification"/);
      }
      for (const format of ["json", "csv"]) {
        const exported = await request(app, "GET", `/_admin/export/verification.${format}`, { headers: as });
        expect(exported.status).toBe(200);
        const text = typeof exported.body === "string" ? exported.body : JSON.stringify(exported.body);
        expect(text).toContain("[redacted]");
        expect(text).not.toContain(stored[0]!.identifier);
      }

      // The flow itself still works on the hashed identifier.
      const reset = await request(app, "POST", "/api/auth/reset-password", {
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ token, newPassword: "a-brand-new-password-0001" }),
      });
      expect(reset.status).toBe(200);
      await signIn(app, "victim@example.test", "a-brand-new-password-0001");
    } finally {
      await app.close();
    }
  });
});
