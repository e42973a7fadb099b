// Sign-in with an OpenID Connect provider (`.auth({ oidc: [...] })`), against `oidc-provider` on a
// loopback port, through the whole authorization-code flow with PKCE: the browser leaves the app,
// signs in at the provider and comes back with a code the app exchanges for tokens.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { OAuthBrowser } from "../support/oauth-browser.js";
import { startOidcServer, type OidcAccount, type OidcServer } from "../support/oidc-server.js";

const v1 = schema("1").auth().build();
const CALLBACK = `${ORIGIN}/api/auth/callback/idp`;

let idp: OidcServer;
let app: Awaited<ReturnType<typeof start>>;
const errors: unknown[] = [];
const start = () =>
  new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: (error) => errors.push(error) })
    .schema(v1)
    .auth({
      secret: "a-test-secret-that-is-long-enough-0123456789",
      emailAndPassword: { enabled: true },
      oidc: [{ id: "idp", name: "Loopback IdP", issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }],
    })
    .start();

beforeAll(async () => {
  idp = await startOidcServer([CALLBACK]);
  app = await start();
}, 30_000);
afterAll(async () => {
  await app?.close();
  await idp?.close();
});

let n = 0;
const account = (over: Partial<OidcAccount> = {}): OidcAccount => ({ sub: `sub-${++n}`, email: `person-${n}@idp.test`, email_verified: true, name: `Person ${n}`, ...over });
const isCallback = (url: URL) => url.href.startsWith(CALLBACK);
const leavesAuth = (url: URL) => url.origin === ORIGIN && !url.pathname.startsWith("/api/auth/");

/** Starts a sign-in at the app; returns the browser and the provider's authorization URL. */
async function begin(browser = new OAuthBrowser(app, ORIGIN), callbackURL = "/welcome") {
  const response = await browser.request(`${ORIGIN}/api/auth/sign-in/social`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ provider: "idp", callbackURL, errorCallbackURL: "/signin-failed" }),
  });
  const body = (await response.json()) as { url: string; redirect: boolean; message?: string };
  return { browser, response, body };
}

/** From the authorization URL to the provider's redirect back to the app (not delivered yet). */
async function atProvider(step: Parameters<OidcServer["next"]>[0]) {
  const started = await begin();
  expect(started.response.status).toBe(200);
  idp.next(step);
  const { stoppedAt } = await started.browser.follow(started.body.url, isCallback);
  expect(stoppedAt).toBeDefined();
  return { browser: started.browser, callback: stoppedAt!, authorization: new URL(started.body.url) };
}

async function session(browser: OAuthBrowser) {
  const response = await browser.request(`${ORIGIN}/api/auth/get-session`);
  return (await response.json()) as { user: { id: string; email: string; emailVerified: boolean } } | null;
}

describe("OpenID Connect sign-in", () => {
  it("offers the provider, by its name, on the sign-in page", async () => {
    const html = await (await app.handle(new Request(`${ORIGIN}/auth/sign-in`))).text();
    expect(html).toContain('<button type="button" data-provider="idp">Continue with Loopback IdP</button>');
  });

  it("sends the browser to the provider with state, nonce and an S256 PKCE challenge", async () => {
    const { body } = await begin();
    const url = new URL(body.url);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get("client_id")).toBe(idp.clientId);
    expect(url.searchParams.get("redirect_uri")).toBe(CALLBACK);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("state")).toBeTruthy();
    expect(url.searchParams.get("nonce")).toBeTruthy();
    expect(url.searchParams.get("scope")?.split(" ").sort()).toEqual(["email", "openid", "profile"]);
  });

  it("signs a new user up and in, and comes back to the callbackURL with a session", async () => {
    const who = account();
    const { browser, callback } = await atProvider({ account: who });
    const back = await browser.follow(callback, leavesAuth);
    expect(back.stoppedAt?.href).toBe(`${ORIGIN}/welcome`);
    const signedIn = await session(browser);
    expect(signedIn?.user).toMatchObject({ email: who.email, emailVerified: true });
    const linked = await app.db.selectFrom("account").select(["providerId", "accountId"]).where("userId", "=", signedIn!.user.id).execute();
    expect(linked).toEqual([{ providerId: "idp", accountId: who.sub }]);
    // The same person again: the same user, no second account.
    const again = await atProvider({ account: who });
    await again.browser.follow(again.callback, leavesAuth);
    expect((await session(again.browser))?.user.id).toBe(signedIn!.user.id);
  });

  it("refuses a callback whose state was changed: error redirect, no session, no token request", async () => {
    const { browser, callback } = await atProvider({ account: account() });
    const before = idp.tokenRequests.length;
    callback.searchParams.set("state", "forged-state");
    const response = await browser.request(callback);
    expect(response.status).toBe(302);
    // A forged state names no sign-in, so not its errorCallbackURL either: the library's error page.
    const location = new URL(response.headers.get("location")!, ORIGIN);
    expect(location.pathname).toBe("/api/auth/error");
    expect(location.searchParams.get("error")).toBe("state_mismatch");
    expect(await session(browser)).toBeNull();
    expect(idp.tokenRequests.length).toBe(before);
  });

  it("takes a code once: the same callback delivered again signs nobody in", async () => {
    const { browser, callback } = await atProvider({ account: account() });
    const first = await browser.request(callback);
    expect(first.headers.get("location")).toBe("/welcome");
    const replay = new OAuthBrowser(app, ORIGIN);
    // A second browser replaying the whole URL has no state cookie; the first one replaying it has used its state.
    for (const replayer of [replay, browser]) {
      const response = await replayer.request(callback);
      expect(response.status).toBe(302);
      expect(response.headers.get("location")).toMatch(/error=/);
    }
    expect(await session(replay)).toBeNull();
  });

  it("ends a cancelled consent at the error callback with the provider's error, never a 500", async () => {
    const { browser, callback } = await atProvider({ error: "access_denied", description: "The user cancelled" });
    expect(callback.searchParams.get("error")).toBe("access_denied");
    const response = await browser.request(callback);
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("location")!, ORIGIN);
    expect(location.pathname).toBe("/signin-failed");
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(await session(browser)).toBeNull();
  });

  it("without an errorCallbackURL, a provider error ends on the library's error page (200, HTML)", async () => {
    const browser = new OAuthBrowser(app, ORIGIN);
    const started = await browser.request(`${ORIGIN}/api/auth/sign-in/social`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ provider: "idp", callbackURL: "/welcome" }),
    });
    idp.next({ error: "server_error", description: "The provider failed" });
    const { stoppedAt } = await browser.follow(((await started.json()) as { url: string }).url, isCallback);
    const end = await browser.follow(stoppedAt!);
    const last = end.hops.at(-1)!;
    expect(new URL(last.url).pathname).toBe("/api/auth/error");
    expect(last.status).toBe(200);
    expect(end.last.headers.get("content-type")).toMatch(/text\/html/);
    expect(await end.last.text()).toMatch(/server_error/);
  });

  it("refuses a callbackURL on another origin (open redirect) with 403 before leaving the app", async () => {
    for (const target of ["https://evil.example/steal", "//evil.example/steal", "http://localhost:3000.evil.example/x"]) {
      const { response, body } = await begin(undefined, target);
      expect(response.status, target).toBe(403);
      expect(body.message).toMatch(/callbackURL/i);
    }
  });

  it("signs a banned user in nowhere: error redirect, no session", async () => {
    const who = account();
    const first = await atProvider({ account: who });
    await first.browser.follow(first.callback, leavesAuth);
    const id = (await session(first.browser))!.user.id;
    await app.db.updateTable("user").set({ banned: true, banReason: "spam" }).where("id", "=", id).execute();
    expect(await session(first.browser)).toBeNull();
    const { browser, callback } = await atProvider({ account: who });
    const response = await browser.request(callback);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toMatch(/banned/i);
    expect(await session(browser)).toBeNull();
  });
});

describe("account linking by email", () => {
  it("does not link a provider account to an existing user when the provider's email is unverified", async () => {
    const victim = await signUp(app, "victim@example.test");
    await app.db.updateTable("user").set({ emailVerified: true }).where("id", "=", victim.userId).execute();
    const { browser, callback } = await atProvider({ account: account({ email: "victim@example.test", email_verified: false }) });
    const response = await browser.request(callback);
    expect(response.headers.get("location")).toMatch(/error=account_not_linked/);
    expect(await session(browser)).toBeNull();
    expect(await app.db.selectFrom("account").select("providerId").where("userId", "=", victim.userId).execute()).toEqual([{ providerId: "credential" }]);
  });

  it("does not link when the existing user never verified their own address (someone may have signed up with it)", async () => {
    const squatter = await signUp(app, "squatted@example.test");
    const { browser, callback } = await atProvider({ account: account({ email: "squatted@example.test", email_verified: true }) });
    expect((await browser.request(callback)).headers.get("location")).toMatch(/error=account_not_linked/);
    expect(await app.db.selectFrom("account").select("providerId").where("userId", "=", squatter.userId).execute()).toEqual([{ providerId: "credential" }]);
  });

  it("links when both sides verified the address", async () => {
    const owner = await signUp(app, "owner@example.test");
    await app.db.updateTable("user").set({ emailVerified: true }).where("id", "=", owner.userId).execute();
    const { browser, callback } = await atProvider({ account: account({ email: "owner@example.test", email_verified: true }) });
    await browser.follow(callback, leavesAuth);
    expect((await session(browser))?.user.id).toBe(owner.userId);
    expect(errors).toEqual([]);
  });
});
