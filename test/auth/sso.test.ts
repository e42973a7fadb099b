// Single sign-on (schema().auth({ sso: true })): an admin registers an OpenID Connect provider for an
// email domain at run time, and a user of that domain signs in through it; nobody else may register
// one. Against oidc-provider on a loopback port, on SQLite. The admin API's `_admin.sso` section lists,
// registers and deletes providers for any admin.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { OAuthBrowser } from "../support/oauth-browser.js";
import { startOidcServer, type OidcServer } from "../support/oidc-server.js";

const CALLBACK = `${ORIGIN}/api/auth/sso/callback/corp`;
let idp: OidcServer;
let app: any;

beforeAll(async () => {
  idp = await startOidcServer([CALLBACK]);
  app = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
    .schema(schema("1").auth({ sso: true }).build())
    // The provider is on a private address: an internal IdP is trusted by listing its origin.
    .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true }, trustedOrigins: [idp.issuer] })
    .admin({ ui: false })
    .start();
}, 30_000);
afterAll(async () => {
  await app?.close();
  await idp?.close();
});

const register = (cookie: string) =>
  app.handle(
    new Request(`${ORIGIN}/api/auth/sso/register`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, cookie },
      body: JSON.stringify({ providerId: "corp", issuer: idp.issuer, domain: "corp.test", oidcConfig: { clientId: idp.clientId, clientSecret: idp.clientSecret } }),
    }),
  );

describe("SSO providers", () => {
  it("refuses registration to a user without an admin role (403)", async () => {
    const user = await signUp(app, "someone@elsewhere.test");
    const refused = await register(user.cookie);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/disabled/i);
    expect(await app.db.selectFrom("ssoProvider").selectAll().execute()).toEqual([]);
  });

  it("lets an admin register one, and a user of its domain signs in through it", async () => {
    const boss = await signUp(app, "boss@elsewhere.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.userId).execute();
    const registered = await register(boss.cookie);
    expect(registered.status, await registered.clone().text()).toBe(200);
    expect(await app.db.selectFrom("ssoProvider").select(["providerId", "domain", "userId"]).execute()).toEqual([{ providerId: "corp", domain: "corp.test", userId: boss.userId }]);

    const browser = new OAuthBrowser(app, ORIGIN);
    const started = await browser.request(`${ORIGIN}/api/auth/sign-in/sso`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email: "ann@corp.test", callbackURL: "/home" }),
    });
    expect(started.status).toBe(200);
    const { url } = (await started.json()) as { url: string };
    expect(new URL(url).origin).toBe(idp.issuer);
    expect(new URL(url).searchParams.get("code_challenge_method")).toBe("S256");
    idp.next({ account: { sub: "ann", email: "ann@corp.test", email_verified: true, name: "Ann" } });
    const { stoppedAt } = await browser.follow(url, (next) => next.origin === ORIGIN && !next.pathname.startsWith("/api/auth/"));
    expect(stoppedAt?.pathname).toBe("/home");
    const session = (await (await browser.request(`${ORIGIN}/api/auth/get-session`)).json()) as { user: { email: string } } | null;
    expect(session?.user.email).toBe("ann@corp.test");
  });
});

describe("_admin.sso", () => {
  const partner = () => ({ providerId: "partner", issuer: idp.issuer, domain: "Partner.test", clientId: idp.clientId, clientSecret: idp.clientSecret });

  it("answers 401 signed out and 403 to a user without an admin role", async () => {
    expect((await rpc(app, "_admin.sso.list")).status).toBe(401);
    const user = await signUp(app, "nosy@elsewhere.test");
    expect((await rpc(app, "_admin.sso.list", undefined, { cookie: user.cookie })).status).toBe(403);
    expect((await rpc(app, "_admin.sso.register", partner(), { cookie: user.cookie })).status).toBe(403);
    expect((await rpc(app, "_admin.sso.delete", { providerId: "corp" }, { cookie: user.cookie })).status).toBe(403);
  });

  it("registers a provider as the admin, lists every provider without secrets, and deletes any of them", async () => {
    const root = await signUp(app, "root@elsewhere.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", root.userId).execute();
    const as = { cookie: root.cookie };

    const bad = await rpc(app, "_admin.sso.register", { ...partner(), providerId: "part ner", issuer: "ftp://idp.test" }, as);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("letters, digits, - and _ only");
    expect((await rpc(app, "_admin.sso.register", partner(), as)).body).toEqual({ providerId: "partner" });
    const again = await rpc(app, "_admin.sso.register", partner(), as);
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);

    const listed = await rpc(app, "_admin.sso.list", undefined, as);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ providerId: "corp", type: "oidc", domain: "corp.test", registeredBy: { id: expect.any(String), email: "boss@elsewhere.test" } }),
      {
        providerId: "partner",
        type: "oidc",
        issuer: idp.issuer,
        domain: "partner.test",
        domainVerified: false,
        organizationId: null,
        clientIdEnd: idp.clientId.slice(-4),
        registeredBy: { id: root.userId, email: "root@elsewhere.test" },
        callbackUrl: `${ORIGIN}/api/auth/sso/callback/partner`,
      },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(idp.clientSecret);

    // Another admin's provider, with the account a user signed in through: both go.
    expect(await app.db.selectFrom("account").select("providerId").where("providerId", "=", "corp").execute()).toHaveLength(1);
    expect((await rpc(app, "_admin.sso.delete", { providerId: "corp" }, as)).body).toEqual({ deleted: true });
    expect(await app.db.selectFrom("account").select("providerId").where("providerId", "=", "corp").execute()).toEqual([]);
    const missing = await rpc(app, "_admin.sso.delete", { providerId: "corp" }, as);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('No single sign-on provider "corp"');
    expect((await rpc(app, "_admin.sso.list", undefined, as)).body.map((p: { providerId: string }) => p.providerId)).toEqual(["partner"]);
  });
});
