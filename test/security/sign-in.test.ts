// Red team for the sign-in methods: an attacker tampers with the OAuth state and the PKCE challenge,
// replays or injects authorization codes, aims callbackURL elsewhere, claims a victim's address at a
// provider that did not verify it, guesses TOTP codes, and signs in while banned. A real OpenID
// Connect provider (oidc-provider) on a loopback port; codes computed with otpauth. On PostgreSQL
// when DATABASE_URL is set, else on SQLite.
import * as OTPAuth from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN, cookieOf } from "../support/auth.js";
import { OAuthBrowser } from "../support/oauth-browser.js";
import { startOidcServer, type OidcAccount, type OidcServer } from "../support/oidc-server.js";

const CALLBACK = `${ORIGIN}/api/auth/callback/idp`;
const PASSWORD = "correct-horse-battery-staple";
// Hashing is not under attack here; a cheap stand-in keeps the many sign-ins fast.
const FAST_HASH = { hash: async (password: string) => `plain:${password}`, verify: async ({ hash, password }: { hash: string; password: string }) => hash === `plain:${password}` };

let idp: OidcServer;
let app: any;
let database: TestDatabase;
/** `true` as the database stores it (SQLite keeps booleans as 1 and 0). */
const yes = () => (database.kind === "sqlite" ? 1 : true) as never;
beforeAll(async () => {
  idp = await startOidcServer([CALLBACK]);
  database = await openDatabase(process.env.DATABASE_URL ? "postgres" : "sqlite");
  app = await new App({ baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind } })
    .schema(schema("1").auth({ twoFactor: true }).build())
    .auth({
      secret: "a-test-secret-that-is-long-enough-0123456789",
      emailAndPassword: { enabled: true, password: FAST_HASH },
      oidc: [{ id: "idp", issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }],
    })
    .start();
}, 30_000);
afterAll(async () => {
  await app?.close();
  await database?.close();
  await idp?.close();
});

let n = 0;
const person = (over: Partial<OidcAccount> = {}): OidcAccount => ({ sub: `red-${++n}`, email: `red-${n}@idp.test`, email_verified: true, ...over });
const isCallback = (url: URL) => url.href.startsWith(CALLBACK);

async function startSignIn(browser: OAuthBrowser, body: Record<string, unknown> = {}) {
  const response = await browser.request(`${ORIGIN}/api/auth/sign-in/social`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ provider: "idp", callbackURL: "/home", ...body }),
  });
  return { status: response.status, body: (await response.json()) as { url: string; message?: string } };
}

/** A browser that signs in at the provider and stops before the redirect back: its callback URL. */
async function codeFor(account: OidcAccount, tamper?: (authorization: URL) => void) {
  const browser = new OAuthBrowser(app, ORIGIN);
  const { body } = await startSignIn(browser);
  const authorization = new URL(body.url);
  tamper?.(authorization);
  idp.next({ account });
  const { stoppedAt } = await browser.follow(authorization, isCallback);
  return { browser, callback: stoppedAt! };
}

async function sessionOf(browser: OAuthBrowser) {
  return (await (await browser.request(`${ORIGIN}/api/auth/get-session`)).json()) as { user: { id: string } } | null;
}

/** A callback the app refused: a redirect to an error landing, no session cookie set. */
async function expectRefused(browser: OAuthBrowser, callback: URL, error?: string) {
  const response = await browser.request(callback);
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get("location")!, ORIGIN);
  expect(location.searchParams.get("error")).toBeTruthy();
  if (error) expect(location.searchParams.get("error")).toBe(error);
  expect(response.headers.getSetCookie().some((line) => /session_token=[^;]+/.test(line))).toBe(false);
  expect(await sessionOf(browser)).toBeNull();
}

describe("OAuth state and PKCE", () => {
  it("refuses a forged state and one taken from another browser", async () => {
    const { callback } = await codeFor(person());
    const forged = new URL(callback);
    forged.searchParams.set("state", "A".repeat(32));
    await expectRefused(new OAuthBrowser(app, ORIGIN), forged, "state_mismatch");
    // The genuine state, but delivered by a browser that never started the sign-in (login CSRF).
    await expectRefused(new OAuthBrowser(app, ORIGIN), callback, "state_mismatch");
  });

  it("refuses a code issued for a swapped PKCE challenge: the provider rejects the app's verifier", async () => {
    const before = idp.tokenRequests.length;
    const { browser, callback } = await codeFor(person(), (authorization) => authorization.searchParams.set("code_challenge", "B".repeat(43)));
    await expectRefused(browser, callback);
    expect(idp.tokenRequests.slice(before).map((request) => request.status)).toEqual([400]);
  });

  it("refuses a victim's code injected into the attacker's own sign-in (code injection)", async () => {
    const victim = await codeFor(person());
    const attacker = new OAuthBrowser(app, ORIGIN);
    const { body } = await startSignIn(attacker);
    const injected = new URL(CALLBACK);
    injected.searchParams.set("code", victim.callback.searchParams.get("code")!);
    injected.searchParams.set("state", new URL(body.url).searchParams.get("state")!);
    injected.searchParams.set("iss", idp.issuer);
    const before = idp.tokenRequests.length;
    await expectRefused(attacker, injected);
    expect(idp.tokenRequests.slice(before).map((request) => request.status)).toEqual([400]);
  });

  it("takes a code once, even with a fresh state", async () => {
    const { browser, callback } = await codeFor(person());
    const first = await browser.request(callback);
    expect(first.headers.get("location")).toBe("/home");
    // Same URL again: the state is spent.
    await expectRefused(new OAuthBrowser(app, ORIGIN), callback);
    // The spent code under a new sign-in's state: the provider refuses it.
    const replayer = new OAuthBrowser(app, ORIGIN);
    const { body } = await startSignIn(replayer);
    const replay = new URL(callback);
    replay.searchParams.set("state", new URL(body.url).searchParams.get("state")!);
    await expectRefused(replayer, replay);
  });
});

describe("open redirects", () => {
  const elsewhere = ["https://evil.example/", "//evil.example/", "http://localhost:3000@evil.example/", "http://localhost:3000.evil.example/", "javascript:alert(1)"];

  it.each(["callbackURL", "errorCallbackURL", "newUserCallbackURL"])("refuses %s on another origin with 403", async (field) => {
    for (const target of elsewhere) {
      const { status, body } = await startSignIn(new OAuthBrowser(app, ORIGIN), { [field]: target });
      expect(status, `${field}=${target}`).toBe(403);
      expect(body.message).toMatch(/invalid/i);
    }
  });

  it("refuses a password-reset redirectTo on another origin with 403", async () => {
    const response = await app.handle(
      new Request(`${ORIGIN}/api/auth/request-password-reset`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ email: "nobody@example.test", redirectTo: "https://evil.example/reset" }),
      }),
    );
    expect(response.status).toBe(403);
  });
});

describe("account linking", () => {
  it("never hands a victim's account to a provider identity whose email is unverified", async () => {
    const up = await post("/sign-up/email", { email: "victim@corp.test", password: PASSWORD, name: "Victim" });
    await app.db.updateTable("user").set({ emailVerified: yes() }).where("id", "=", up.body.user.id).execute();
    const { browser, callback } = await codeFor(person({ email: "victim@corp.test", email_verified: false }));
    await expectRefused(browser, callback, "account_not_linked");
    const accounts = await app.db.selectFrom("account").select("providerId").where("userId", "=", up.body.user.id).execute();
    expect(accounts).toEqual([{ providerId: "credential" }]);
  });
});

async function post(path: string, body: unknown, cookie = "", address = "192.0.2.1") {
  const response = await app.handle(
    new Request(`${ORIGIN}/api/auth${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, ...(cookie && { cookie }) }, body: JSON.stringify(body) }),
    { clientAddress: address },
  );
  const text = await response.text();
  return { status: response.status as number, body: text ? JSON.parse(text) : null, cookie: cookieOf(response) };
}

async function withTotp(email: string) {
  const up = await post("/sign-up/email", { email, password: PASSWORD, name: email });
  const enable = await post("/two-factor/enable", { password: PASSWORD }, up.cookie);
  const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
  expect((await post("/two-factor/verify-totp", { code: totp.generate() }, `${up.cookie}; ${enable.cookie}`)).status).toBe(200);
  return { userId: up.body.user.id as string, totp };
}

describe("TOTP guessing", () => {
  it("locks the account after ten wrong codes, whatever the addresses and challenges the guesses come from", async () => {
    const { totp } = await withTotp("guessed@corp.test");
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const address = `198.51.100.${i + 1}`;
      const challenge = await post("/sign-in/email", { email: "guessed@corp.test", password: PASSWORD }, "", address);
      expect(challenge.body.twoFactorRedirect).toBe(true);
      statuses.push((await post("/two-factor/verify-totp", { code: String(200000 + i) }, challenge.cookie, address)).status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
    // At 10 guesses per lockout, a 6-digit code stays out of reach; the right code is refused too until it lifts.
    const challenge = await post("/sign-in/email", { email: "guessed@corp.test", password: PASSWORD }, "", "203.0.113.7");
    expect((await post("/two-factor/verify-totp", { code: totp.generate() }, challenge.cookie, "203.0.113.7")).status).toBe(429);
  });

  it("a wrong code never yields a session, and the challenge cookie alone is no session", async () => {
    await withTotp("probe@corp.test");
    const challenge = await post("/sign-in/email", { email: "probe@corp.test", password: PASSWORD });
    const session = await app.handle(new Request(`${ORIGIN}/api/auth/get-session`, { headers: { cookie: challenge.cookie } }));
    expect(await session.json()).toBeNull();
    const wrong = await post("/two-factor/verify-totp", { code: "000000" }, challenge.cookie);
    expect(wrong.status).toBe(401);
    expect(wrong.cookie).not.toMatch(/session_token=[^;]+/);
  });
});

describe("TOTP guessing with the library's rate limit on (as in production)", () => {
  it("allows three two-factor attempts per ten seconds from one address, then 429", async () => {
    const limited = await new App({ baseUrl: ORIGIN, db: sqliteMemory() })
      .schema(schema("1").auth({ twoFactor: true }).build())
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true, password: FAST_HASH }, rateLimit: { enabled: true } })
      .start();
    try {
      const send = async (path: string, body: unknown, cookie = "", address = "192.0.2.50") => {
        const response = await limited.handle(
          new Request(`${ORIGIN}/api/auth${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ORIGIN, ...(cookie && { cookie }) }, body: JSON.stringify(body) }),
          { clientAddress: address },
        );
        return { status: response.status, body: (await response.json().catch(() => null)) as any, cookie: cookieOf(response) };
      };
      const up = await send("/sign-up/email", { email: "limited@corp.test", password: PASSWORD, name: "L" }, "", "192.0.2.60");
      const enable = await send("/two-factor/enable", { password: PASSWORD }, up.cookie, "192.0.2.60");
      const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
      expect((await send("/two-factor/verify-totp", { code: totp.generate() }, `${up.cookie}; ${enable.cookie}`, "192.0.2.60")).status).toBe(200);
      const challenge = await send("/sign-in/email", { email: "limited@corp.test", password: PASSWORD });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await send("/two-factor/verify-totp", { code: String(300000 + i) }, challenge.cookie)).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe("banned users", () => {
  it("cannot finish a provider sign-in", async () => {
    const who = person();
    const first = await codeFor(who);
    await first.browser.request(first.callback);
    const id = (await sessionOf(first.browser))!.user.id;
    await app.db.updateTable("user").set({ banned: yes() }).where("id", "=", id).execute();
    const { browser, callback } = await codeFor(who);
    const response = await browser.request(callback);
    expect(response.headers.get("location")).toMatch(/banned/i);
    expect(await sessionOf(browser)).toBeNull();
  });

  it("cannot finish a two-factor sign-in banned between the password and the code", async () => {
    const { userId, totp } = await withTotp("banned-2fa@corp.test");
    const challenge = await post("/sign-in/email", { email: "banned-2fa@corp.test", password: PASSWORD });
    expect(challenge.body.twoFactorRedirect).toBe(true);
    await app.db.updateTable("user").set({ banned: yes() }).where("id", "=", userId).execute();
    const verified = await post("/two-factor/verify-totp", { code: totp.generate() }, challenge.cookie);
    expect(verified.status).toBe(403);
    expect(verified.body.message).toMatch(/banned/i);
    expect(verified.cookie).not.toMatch(/session_token=[^;]+/);
  });
});
