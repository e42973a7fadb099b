// The pages for the links Trellis sends (under /auth by default): the reset and verification links
// land there instead of on `/`, each page is plain HTML under a strict CSP with its one script file,
// and the sign-in page offers exactly the configured methods.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { ORIGIN } from "../support/auth.js";
import { get, mailApp, mailOf, post, signUpBody } from "../mail/fixture.js";

describe("auth pages with mail", () => {
  let app: Awaited<ReturnType<ReturnType<typeof mailApp>["start"]>>;
  beforeAll(async () => {
    app = await mailApp(sqliteMemory(), {}).start();
  });
  afterAll(() => app?.close());

  const latest = async (to: string) => {
    await mailOf(app).flush();
    return (await get(app, `/_mail/latest?to=${to}`)).body as { kind: string; link: string };
  };

  it("lands the verification link on /auth/verified", async () => {
    expect((await post(app, "/api/auth/sign-up/email", signUpBody("una@example.test"))).status).toBe(200);
    const mail = await latest("una@example.test");
    expect(mail.kind).toBe("verify-email");
    expect(new URL(mail.link).searchParams.get("callbackURL")).toBe("/auth/verified");
    const landing = await get(app, mail.link);
    expect(landing.status).toBe(302);
    const location = landing.headers.get("location")!;
    expect(new URL(location, ORIGIN).pathname).toBe("/auth/verified");
    const page = await app.handle(new Request(new URL(location, ORIGIN)));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Your email address is verified.");
  });

  it("lands the reset link on /auth/reset-password with its token, whose form sets the password", async () => {
    expect((await post(app, "/api/auth/request-password-reset", { email: "una@example.test" })).status).toBe(200);
    const mail = await latest("una@example.test");
    expect(mail.kind).toBe("reset-password");
    const landing = await get(app, mail.link);
    expect(landing.status).toBe(302);
    const target = new URL(landing.headers.get("location")!, ORIGIN);
    expect(target.pathname).toBe("/auth/reset-password");
    const token = target.searchParams.get("token")!;
    expect(token).toBeTruthy();
    const page = await app.handle(new Request(target));
    const html = await page.text();
    expect(html).toContain(`<input type="hidden" name="token" value="${token}">`);
    expect(html).toMatch(/<label>New password <input name="password" type="password"/);
    expect((await post(app, "/api/auth/reset-password", { newPassword: "a brand new passphrase", token })).status).toBe(200);
  });

  it("keeps a landing the request chose itself", async () => {
    expect((await post(app, "/api/auth/request-password-reset", { email: "una@example.test", redirectTo: "/my-reset" })).status).toBe(200);
    expect(new URL((await latest("una@example.test")).link).searchParams.get("callbackURL")).toBe("/my-reset");
  });

  it("says an expired or used reset link is no good, with a way back", async () => {
    const html = await (await app.handle(new Request(`${ORIGIN}/auth/reset-password?error=INVALID_TOKEN`))).text();
    expect(html).toContain("This link is invalid or has expired.");
    expect(html).not.toContain('name="token"');
    expect(html).toContain('<a href="/auth/sign-in">Back to sign-in</a>');
  });

  it("serves every page as HTML under a strict CSP, with no inline script or style", async () => {
    for (const path of ["/auth/sign-in", "/auth/two-factor", "/auth/reset-password?token=t", "/auth/verified", "/auth/signed-in", "/auth/error?error=access_denied"]) {
      const response = await app.handle(new Request(`${ORIGIN}${path}`));
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = response.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).toContain("frame-ancestors 'none'");
      const html = await response.text();
      expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|<style/);
      expect(html).toContain('<script src="/auth/pages.js" defer></script>');
    }
    const script = await app.handle(new Request(`${ORIGIN}/auth/pages.js`));
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    // The served script parses (compiled, not run).
    const source = await script.text();
    expect(source).toContain("/api/auth/sign-in/email".replace("/api/auth", ""));
    expect(() => new Function(source)).not.toThrow();
  });

  it("escapes what it echoes and never sends the browser off the app", async () => {
    const evil = await (await app.handle(new Request(`${ORIGIN}/auth/error?error=${encodeURIComponent('<img src=x onerror=alert(1)>')}`))).text();
    expect(evil).not.toContain("<img src=x");
    expect(evil).toContain("&lt;img src=x onerror=alert(1)&gt;");
    for (const target of ["https://evil.example/", "//evil.example/", "/\\evil.example/", "javascript:alert(1)"]) {
      const html = await (await app.handle(new Request(`${ORIGIN}/auth/sign-in?callbackURL=${encodeURIComponent(target)}`))).text();
      expect(html, target).toContain('<div data-next="/"></div>');
    }
    const local = await (await app.handle(new Request(`${ORIGIN}/auth/sign-in?callbackURL=${encodeURIComponent("/app?tab=1")}`))).text();
    expect(local).toContain('<div data-next="/app?tab=1"></div>');
  });
});

describe("the reset landing when the app names one", () => {
  it("mail's resetPasswordPage wins over the pages; without pages the landing stays /", async () => {
    for (const [mail, auth, expected] of [
      [{ auth: { resetPasswordPage: "/mine" } }, {}, "/mine"],
      [{}, { pages: false }, "/"],
    ] as const) {
      const app = await mailApp(sqliteMemory(), mail, auth).start();
      try {
        expect((await post(app, "/api/auth/sign-up/email", signUpBody("lu@example.test"))).status).toBe(200);
        expect((await post(app, "/api/auth/request-password-reset", { email: "lu@example.test" })).status).toBe(200);
        await mailOf(app).flush();
        const link = ((await get(app, "/_mail/latest?to=lu@example.test")).body as { link: string }).link;
        expect(new URL(link).searchParams.get("callbackURL")).toBe(expected);
      } finally {
        await app.close();
      }
    }
  });
});

describe("the sign-in page offers the configured methods", () => {
  it("password, social providers and passkeys; no button for a provider turned off or whose discovery failed; a magic link only when mail offers it", async () => {
    const app = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(schema("1").auth({ passkeys: true }).build())
      .auth({
        secret: "a-test-secret-that-is-long-enough-0123456789",
        emailAndPassword: { enabled: true },
        socialProviders: { github: { clientId: "id", clientSecret: "secret" }, google: { clientId: "", clientSecret: "", enabled: false } },
        oidc: [{ id: "corp", name: "Corp <SSO>", issuer: "http://127.0.0.1:9/none", clientId: "id", clientSecret: "secret" }],
        pages: { path: "/account/", stylesheet: "/brand.css" },
      })
      .start();
    try {
      const html = await (await app.handle(new Request(`${ORIGIN}/account/sign-in`))).text();
      expect(html).toContain('<form data-form="password">');
      expect(html).toContain('<button type="button" data-provider="github">Continue with GitHub</button>');
      expect(html).not.toContain('data-provider="google"');
      // Its issuer does not answer: the provider is skipped, so the page offers no button that cannot work.
      expect(html).not.toContain('data-provider="corp"');
      expect(html).toContain("<button type=\"button\" data-passkey>Sign in with a passkey</button>");
      expect(html).not.toContain('data-form="magic-link"');
      expect(html).toContain('<link rel="stylesheet" href="/brand.css">');
      expect((await app.handle(new Request(`${ORIGIN}/auth/sign-in`))).status).toBe(404);
    } finally {
      await app.close();
    }
  });

  it("pages: false serves none", async () => {
    const app = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(schema("1").auth().build())
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true }, pages: false })
      .start();
    try {
      expect((await app.handle(new Request(`${ORIGIN}/auth/sign-in`))).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
