import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { startSmtp, type TestSmtp } from "../support/smtp.js";
import { ORIGIN } from "../support/auth.js";
import { PASSWORD, get, mailApp, mailOf, post, signUpBody } from "./fixture.js";

/**
 * Every auth flow end to end on a real SMTP server (loopback): the message is read as it arrived
 * (headers, text, HTML, the link), then the link is followed through handle() to the flow's end.
 */
describe("mail over SMTP", () => {
  let db: TestDatabase;
  let smtp: TestSmtp;
  let app: Awaited<ReturnType<typeof start>>;

  function start() {
    return mailApp(
      { dialect: db.dialect, kind: db.kind },
      { transport: smtp.url, auth: { requireEmailVerification: true, magicLink: true, emailOtp: true }, limits: { perAddress: 50, perClient: 1000 } },
    ).start();
  }

  /** Signs up and verifies through the link, returning the session cookie. */
  async function verifiedUser(email: string, name?: string): Promise<string> {
    expect((await post(app, "/api/auth/sign-up/email", signUpBody(email, name))).status).toBe(200);
    const mail = await smtp.next(email);
    const followed = await get(app, mail.link!);
    expect(followed.status).toBe(302);
    return followed.cookie;
  }

  beforeAll(async () => {
    // SQLite: the flows are the same on every database (the outbox test covers all three), and it starts at once.
    db = await openDatabase("sqlite");
    smtp = await startSmtp();
    app = await start();
  });
  afterAll(async () => {
    await app?.close();
    await smtp?.close();
    await db?.close();
  });

  it("sends the verification on sign-up; sign-in waits for it; the link verifies and signs in", async () => {
    const signUp = await post(app, "/api/auth/sign-up/email", signUpBody("ada@example.test", "Ada"));
    expect(signUp.status).toBe(200);
    expect(signUp.cookie).toBe("");
    const mail = await smtp.next("ada@example.test");
    expect(mail.headers.get("from")).toBe("Test App <no-reply@example.test>");
    expect(mail.headers.get("to")).toBe("ada@example.test");
    expect(mail.subject).toBe("Verify your email for Test <App>");
    expect(mail.text).toContain("Hello Ada,");
    expect(mail.link).toMatch(/^http:\/\/localhost:3000\/api\/auth\/verify-email\?token=[\w.-]+&callbackURL=/);
    // The app's name is user-controlled text in HTML: escaped.
    expect(mail.html).toContain("Test &lt;App&gt;");
    expect(mail.html).not.toContain("<App>");

    const refused = await post(app, "/api/auth/sign-in/email", { email: "ada@example.test", password: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("EMAIL_NOT_VERIFIED");

    const followed = await get(app, mail.link!);
    expect(followed.status).toBe(302);
    const session = await get(app, "/api/auth/get-session", followed.cookie);
    expect(session.body.user).toMatchObject({ email: "ada@example.test", emailVerified: true });
    expect((await post(app, "/api/auth/sign-in/email", { email: "ada@example.test", password: PASSWORD })).status).toBe(200);
  });

  it("resends the verification on request", async () => {
    await post(app, "/api/auth/sign-up/email", signUpBody("bob@example.test"));
    const first = await smtp.next("bob@example.test");
    expect((await post(app, "/api/auth/send-verification-email", { email: "bob@example.test" })).status).toBe(200);
    const second = await smtp.next("bob@example.test");
    expect(second.subject).toBe(first.subject);
    expect((await get(app, second.link!)).status).toBe(302);
    expect((await post(app, "/api/auth/sign-in/email", { email: "bob@example.test", password: PASSWORD })).status).toBe(200);
  });

  it("resets a password through the link and revokes the other sessions", async () => {
    const cookie = await verifiedUser("cleo@example.test");
    const other = await post(app, "/api/auth/sign-in/email", { email: "cleo@example.test", password: PASSWORD });
    expect(other.status).toBe(200);

    const asked = await post(app, "/api/auth/request-password-reset", { email: "cleo@example.test", redirectTo: "/reset" });
    expect(asked.status).toBe(200);
    const mail = await smtp.next("cleo@example.test");
    expect(mail.subject).toBe("Reset your Test <App> password");
    expect(mail.link).toMatch(/^http:\/\/localhost:3000\/api\/auth\/reset-password\/\w+\?callbackURL=%2Freset$/);

    const landing = await get(app, mail.link!);
    expect(landing.status).toBe(302);
    const location = new URL(landing.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(`${ORIGIN}/reset`);
    const token = location.searchParams.get("token")!;

    const reset = await post(app, "/api/auth/reset-password", { newPassword: "a brand new passphrase", token });
    expect(reset.status).toBe(200);
    for (const old of [cookie, other.cookie]) expect((await get(app, "/api/auth/get-session", old)).body).toBeNull();
    expect((await post(app, "/api/auth/sign-in/email", { email: "cleo@example.test", password: PASSWORD })).status).toBe(401);
    expect((await post(app, "/api/auth/sign-in/email", { email: "cleo@example.test", password: "a brand new passphrase" })).status).toBe(200);
    // The token is single-use.
    expect((await post(app, "/api/auth/reset-password", { newPassword: "yet another passphrase", token })).status).toBe(400);
  });

  it("a reset link without redirectTo lands on the auth pages' reset page", async () => {
    await verifiedUser("dan@example.test");
    await post(app, "/api/auth/request-password-reset", { email: "dan@example.test" });
    const mail = await smtp.next("dan@example.test");
    const landing = await get(app, mail.link!);
    expect(landing.status).toBe(302);
    expect(landing.headers.get("location")).toMatch(/^http:\/\/localhost:3000\/auth\/reset-password\?token=\w+$/);
  });

  it("changes the email after the old address confirms and the new one verifies", async () => {
    const cookie = await verifiedUser("eve@example.test");
    const asked = await post(app, "/api/auth/change-email", { newEmail: "eve.new@example.test" }, { cookie });
    expect(asked.status).toBe(200);
    const confirmation = await smtp.next("eve@example.test");
    expect(confirmation.subject).toBe("Confirm the change of your Test <App> email");
    expect(confirmation.text).toContain("eve.new@example.test");
    expect((await get(app, confirmation.link!, cookie)).status).toBe(302);
    // Until the new address verifies, the account keeps the old one.
    expect((await get(app, "/api/auth/get-session", cookie)).body.user.email).toBe("eve@example.test");

    const verification = await smtp.next("eve.new@example.test");
    expect((await get(app, verification.link!, cookie)).status).toBe(302);
    expect((await post(app, "/api/auth/sign-in/email", { email: "eve.new@example.test", password: PASSWORD })).status).toBe(200);
  });

  it("signs in by link (magic link)", async () => {
    await verifiedUser("fay@example.test");
    expect((await post(app, "/api/auth/sign-in/magic-link", { email: "fay@example.test", callbackURL: "/" })).status).toBe(200);
    const mail = await smtp.next("fay@example.test");
    expect(mail.subject).toBe("Sign in to Test <App>");
    const followed = await get(app, mail.link!);
    expect(followed.status).toBe(302);
    expect((await get(app, "/api/auth/get-session", followed.cookie)).body.user.email).toBe("fay@example.test");
  });

  it("signs in by one-time code (email OTP)", async () => {
    await verifiedUser("gus@example.test");
    expect((await post(app, "/api/auth/email-otp/send-verification-otp", { email: "gus@example.test", type: "sign-in" })).status).toBe(200);
    const mail = await smtp.next("gus@example.test");
    const code = /code is (\d+)/.exec(mail.text)?.[1];
    expect(mail.subject).toBe(`Your Test <App> code: ${code}`);
    const signedIn = await post(app, "/api/auth/sign-in/email-otp", { email: "gus@example.test", otp: code });
    expect(signedIn.status).toBe(200);
    expect(signedIn.cookie).toContain("better-auth.session_token=");
  });

  it("escapes user data in HTML", async () => {
    await post(app, "/api/auth/sign-up/email", signUpBody("hal@example.test", `<img src=x onerror="alert(1)">`));
    const mail = await smtp.next("hal@example.test");
    expect(mail.html).toContain("Hello &lt;img src=x onerror=&quot;alert(1)&quot;&gt;,");
    expect(mail.html).not.toContain("<img");
    expect(mail.text).toContain(`Hello <img src=x onerror="alert(1)">,`);
  });

  it("context.mail.send queues a message of the app's own", async () => {
    const sent = await post(app, "/rpc/notify", {});
    expect(sent.status).toBe(200);
    expect(sent.body.json.id).toEqual(expect.any(String));
    const mail = await smtp.next("someone@example.test");
    expect(mail.subject).toBe("Hello");
    expect(mail.text).toBe("Plain");
    expect(mail.html).toBe("<p>Plain</p>");
  });
});

describe("mail over SMTP: a failing server", () => {
  it("answers the request as usual, retries, then records and reports the failure", async () => {
    const db = await openDatabase("sqlite");
    const smtp = await startSmtp({ reject: true });
    const reported: unknown[] = [];
    const app = await mailApp({ dialect: db.dialect, kind: db.kind }, { transport: smtp.url, retries: 1, retryDelayMs: 10 }, {}, {
      onError: (error) => void reported.push(error),
    }).start();
    try {
      const signUp = await post(app, "/api/auth/sign-up/email", signUpBody("ivy@example.test"));
      expect(signUp.status).toBe(200);
      expect(signUp.cookie).toContain("better-auth.session_token=");
      await mailOf(app).flush();
      const rows = await app.db.selectFrom("trellis_mail" as never).selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ to_address: "ivy@example.test", kind: "verify-email", transport: "smtp", state: "failed", attempts: 2 });
      expect((rows[0] as { error: string }).error).toMatch(/Mailbox unavailable/);
      // Not a 500 to anyone: the final failure goes to onError, like any unexpected failure.
      expect(reported).toHaveLength(1);
      expect(String(reported[0])).toMatch(/Mailbox unavailable/);
    } finally {
      await app.close();
      await smtp.close();
      await db.close();
    }
  });
});
