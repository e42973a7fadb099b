/**
 * Passkeys (schema().auth({ passkeys: true })) in a real browser: Debian's Chromium through
 * playwright-core, with the DevTools protocol's virtual authenticator standing in for a phone or a
 * security key. Register, sign out, sign in by passkey, list, delete; a banned user's passkey signs
 * nobody in. The dashboard's admin, signed in with two-factor, also manages single sign-on providers
 * (against oidc-provider on a loopback port). Skips, saying why, when no browser can be started.
 */
import * as OTPAuth from "otpauth";
import type { CDPSession, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import type { RunningServer } from "../../presets/node.js";
import { App } from "../../presets/trellis.js";
import { dashboardSuite, PASSWORD } from "../support/dashboard.js";
import { pageFetch, registerPasskey, signInWithPasskey } from "../support/webauthn-page.js";
import { startOidcServer, type OidcServer } from "../support/oidc-server.js";

const chromium = await dashboardSuite("trellis-passkeys-chromium-", "the passkey browser suite");

describe.skipIf(chromium.unavailable !== undefined)("passkeys in Chromium with a virtual authenticator", () => {
  let running: RunningServer;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let url: string;
  let idp: OidcServer;

  beforeAll(async () => {
    idp = await startOidcServer([]);
    ({ running, page, url } = await chromium.serve(
      (url, db) =>
        new App({ name: "Passkey Test", baseUrl: url, db })
          .schema(schema("1").auth({ passkeys: true, twoFactor: true, sso: true }).build())
          // The identity provider is on a private address: trusted by listing its origin.
          .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true }, trustedOrigins: [idp.issuer] })
          .admin({ requireTwoFactor: true })
          .mail({ from: "Passkey Test <no-reply@example.test>", notices: { factorChanged: true } }),
      // localhost, not 127.0.0.1: a relying-party id must be a domain, never an IP address.
      { host: "localhost" },
    ));
    cdp = await chromium.context!.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    ({ authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
    await page.goto(`${url}/health`);
  }, 60_000);

  afterAll(async () => {
    await chromium.close();
    await idp?.close();
  });

  /** The factor-changed notices sent to `to`, as their leading sentence. */
  const notices = async (to: string) => {
    await (running.app.sealed.service("mail") as { flush(): Promise<void> }).flush();
    const rows = await running.app.db.selectFrom("trellis_mail" as never).select("text_body" as never).where("kind" as never, "=", "factor-changed" as never).where("to_address" as never, "=", to as never).orderBy("id" as never).execute();
    return (rows as { text_body: string }[]).map((row) => row.text_body.split("\n")[2]!.replace(/ for your account( by an administrator)?.*/, (_, by: string | undefined) => by ?? ""));
  };
  const session = async () => (await pageFetch(page, "/api/auth/get-session")).body as { user: { id: string; email: string } } | null;

  it("registers a passkey for a signed-in user, bound to the app's origin and host", async () => {
    const up = await pageFetch(page, "/api/auth/sign-up/email", { email: "ada@example.test", password: PASSWORD, name: "Ada" });
    expect(up.status).toBe(200);
    const registered = await registerPasskey(page, "laptop");
    expect(registered.status).toBe(200);
    expect(registered.body).toMatchObject({ name: "laptop", userId: up.body.user.id });
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ rpId: "localhost", isResidentCredential: true });
    const rows = await running.app.db.selectFrom("passkey").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ userId: up.body.user.id, name: "laptop" });
    expect(await notices("ada@example.test")).toEqual(["A passkey was added"]);
  });

  it("refuses to register without a session (401)", async () => {
    expect((await pageFetch(page, "/api/auth/sign-out", {})).status).toBe(200);
    expect(await session()).toBeNull();
    const refused = await registerPasskey(page, "stranger");
    expect(refused.status).toBe(401);
  });

  it("signs the user back in by passkey alone, and moves the signature counter on", async () => {
    const before = await running.app.db.selectFrom("passkey").select("counter").executeTakeFirstOrThrow();
    const signedIn = await signInWithPasskey(page);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.email).toBe("ada@example.test");
    expect((await session())?.user.email).toBe("ada@example.test");
    const after = await running.app.db.selectFrom("passkey").select("counter").executeTakeFirstOrThrow();
    expect(Number(after.counter)).toBeGreaterThan(Number(before.counter));
  });

  it("signs in from the sign-in page's passkey button, under its CSP, and lands on the callbackURL", async () => {
    expect((await pageFetch(page, "/api/auth/sign-out", {})).status).toBe(200);
    const refusals: string[] = [];
    page.on("console", (message) => message.type() === "error" && refusals.push(message.text()));
    await page.goto(`${url}/auth/sign-in?callbackURL=${encodeURIComponent("/health?from=sign-in")}`);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.waitForURL(`${url}/health?from=sign-in`);
    expect((await session())?.user.email).toBe("ada@example.test");
    expect(refusals).toEqual([]);
  });

  it("lists the user's passkeys and deletes one; the deleted one no longer signs in", async () => {
    const listed = await pageFetch(page, "/api/auth/passkey/list-user-passkeys");
    expect(listed.status).toBe(200);
    expect(listed.body.map((passkey: { name: string }) => passkey.name)).toEqual(["laptop"]);
    const deleted = await pageFetch(page, "/api/auth/passkey/delete-passkey", { id: listed.body[0].id });
    expect(deleted.status).toBe(200);
    expect((await pageFetch(page, "/api/auth/passkey/list-user-passkeys")).body).toEqual([]);
    expect(await notices("ada@example.test")).toEqual(["A passkey was added", "A passkey was removed"]);
    await pageFetch(page, "/api/auth/sign-out", {});
    // The authenticator still holds the credential; the app no longer knows it.
    const refused = await signInWithPasskey(page);
    expect(refused.status).toBe(401);
    expect(await session()).toBeNull();
  });

  it("signs a banned user in nowhere by passkey (403)", async () => {
    await cdp.send("WebAuthn.clearCredentials", { authenticatorId });
    const up = await pageFetch(page, "/api/auth/sign-up/email", { email: "bob@example.test", password: PASSWORD, name: "Bob" });
    expect((await registerPasskey(page, "phone")).status).toBe(200);
    await pageFetch(page, "/api/auth/sign-out", {});
    await running.app.db.updateTable("user").set({ banned: true, banReason: "spam" }).where("id", "=", up.body.user.id).execute();
    const refused = await signInWithPasskey(page);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/banned/i);
    expect(await session()).toBeNull();
  });

  it("signs an admin into the dashboard with a two-factor code, shows them a user's passkeys and deletes one", async () => {
    await cdp.send("WebAuthn.clearCredentials", { authenticatorId });
    const carol = await pageFetch(page, "/api/auth/sign-up/email", { email: "carol@example.test", password: PASSWORD, name: "Carol" });
    expect((await registerPasskey(page, "tablet")).status).toBe(200);
    await pageFetch(page, "/api/auth/sign-out", {});
    const boss = await pageFetch(page, "/api/auth/sign-up/email", { email: "boss@example.test", password: PASSWORD, name: "Boss" });
    await running.app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.body.user.id).execute();
    // The dashboard requires two-factor of admins: the boss enrols, then signs in through it with a code.
    const enable = await pageFetch(page, "/api/auth/two-factor/enable", { password: PASSWORD });
    const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
    expect((await pageFetch(page, "/api/auth/two-factor/verify-totp", { code: totp.generate() })).status).toBe(200);
    await pageFetch(page, "/api/auth/sign-out", {});
    await page.goto(`${url}/_admin`);
    // The other methods (providers, passkeys) are a link away, coming back here.
    expect(await page.getByRole("link", { name: "Other ways to sign in" }).getAttribute("href")).toBe("/auth/sign-in?callbackURL=%2F_admin");
    await page.getByLabel("Email").fill("boss@example.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByLabel("Two-factor code").fill(totp.generate());
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("button", { name: "carol@example.test" }).click();
    const panel = page.getByRole("complementary", { name: "User carol@example.test" });
    const passkeys = panel.getByRole("list", { name: "passkeys" });
    await passkeys.waitFor();
    expect(await passkeys.textContent()).toContain("tablet");
    await panel.getByRole("button", { name: "Delete passkey tablet" }).click();
    await panel.getByRole("status").filter({ hasText: "Passkey deleted" }).waitFor();
    await panel.getByText("No passkeys.").waitFor();
    expect(await running.app.db.selectFrom("passkey").selectAll().where("userId", "=", carol.body.user.id).execute()).toEqual([]);
    // The owner is told an administrator removed it; the admin, only of their own factor.
    expect(await notices("carol@example.test")).toEqual(["A passkey was added", "A passkey was removed by an administrator"]);
    expect(await notices("boss@example.test")).toEqual(["Two-factor sign-in was turned on"]);
  }, 60_000);

  it("lets the signed-in admin register a single sign-on provider from the dashboard, and delete it", async () => {
    await page.getByRole("link", { name: "Single sign-on" }).click();
    await page.getByText("No providers yet.").waitFor();
    const form = page.getByRole("form", { name: "Register a provider" });
    await form.getByLabel("Provider id").fill("corp");
    await form.getByLabel("Issuer URL").fill(idp.issuer);
    await form.getByLabel("Email domain").fill("corp.test");
    await form.getByLabel("Client id").fill(idp.clientId);
    await form.getByLabel("Client secret").fill(idp.clientSecret);
    await form.getByRole("button", { name: "Register" }).click();
    await page.getByRole("status").filter({ hasText: "Provider corp registered" }).waitFor();
    const row = page.getByRole("table", { name: "Single sign-on providers" }).getByRole("row").filter({ hasText: "corp.test" });
    expect(await row.textContent()).toContain(`${url}/api/auth/sso/callback/corp`);
    expect(await running.app.db.selectFrom("ssoProvider").select(["providerId", "domain"]).execute()).toEqual([{ providerId: "corp", domain: "corp.test" }]);
    await row.getByRole("button", { name: "Delete corp" }).click();
    await row.getByRole("button", { name: "Confirm delete corp" }).click();
    await page.getByRole("status").filter({ hasText: "Provider corp deleted" }).waitFor();
    await page.getByText("No providers yet.").waitFor();
    expect(await running.app.db.selectFrom("ssoProvider").selectAll().execute()).toEqual([]);
  }, 60_000);
});
