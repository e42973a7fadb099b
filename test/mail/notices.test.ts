import * as OTPAuth from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseConfig } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { MailConfig } from "../../plugins/mail/index.js";
import { errorOf, sqliteMemory } from "../support/app.js";
import { ORIGIN, jar } from "../support/auth.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { PASSWORD, SECRET, get, mailOf, post, signUpBody, type Answer } from "./fixture.js";

/**
 * Security notices (`.mail({ notices })`): a new-sign-in message when a user signs in from a browser
 * not seen before for them, and a factor-changed message when the password, two-factor or passkeys
 * change; both off by default. Through the front door, read back from the development outbox.
 */
const v1 = schema("1").auth({ twoFactor: true }).build();
const FAST_HASH = {
  hash: async (password: string) => `plain:${password}`,
  verify: async ({ hash, password }: { hash: string; password: string }) => hash === `plain:${password}`,
};
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const CHROME = (version: number) => `Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version}.0.0.0 Safari/537.36`;
const HOME = "198.51.100.7";

function start(db: DatabaseConfig, mail: Partial<MailConfig>) {
  return new App({ name: "Notice App", baseUrl: ORIGIN, db })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true, password: FAST_HASH } })
    .mail({ from: "Notice App <no-reply@example.test>", ...mail })
    .start();
}
type Started = Awaited<ReturnType<typeof start>>;

const as = (agent: string, address = HOME, cookie?: string) => ({ headers: { "user-agent": agent }, clientAddress: address, ...(cookie && { cookie }) });

/** The notices sent to `to`, oldest first, once every queued message is written. */
async function notices(app: Started, to: string): Promise<{ kind: string; subject: string; text: string }[]> {
  await mailOf(app).flush();
  const rows = await app.db
    .selectFrom("trellis_mail" as never)
    .select(["kind", "subject", "text_body"] as never[])
    .where("to_address" as never, "=", to as never)
    .where("kind" as never, "in", ["new-sign-in", "factor-changed"] as never)
    .orderBy("id" as never)
    .execute();
  return (rows as { kind: string; subject: string; text_body: string }[]).map(({ text_body, ...rest }) => ({ ...rest, text: text_body }));
}

async function signIn(app: Started, email: string, agent: string, address = HOME, password = PASSWORD): Promise<Answer> {
  const answer = await post(app, "/api/auth/sign-in/email", { email, password }, as(agent, address));
  return answer;
}


describe.each(families())("security notices on %s", (family) => {
  let db: TestDatabase;
  let app: Started;

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await start({ dialect: db.dialect, kind: db.kind }, { notices: { newSignIn: true, factorChanged: true } });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("mails a sign-in from a browser not seen before, once, and not the one the user signed up with", async () => {
    expect((await post(app, "/api/auth/sign-up/email", signUpBody("ann@example.test"), as(CHROME(131)))).status).toBe(200);
    expect((await signIn(app, "ann@example.test", CHROME(131))).status).toBe(200);
    // A browser update and a new address in the same network are the same browser.
    expect((await signIn(app, "ann@example.test", CHROME(132), "198.51.7.9")).status).toBe(200);
    expect(await notices(app, "ann@example.test")).toEqual([]);

    expect((await signIn(app, "ann@example.test", FIREFOX)).status).toBe(200);
    const [notice, ...more] = await notices(app, "ann@example.test");
    expect(more).toEqual([]);
    expect(notice).toMatchObject({ kind: "new-sign-in", subject: "New sign-in to your Notice App account" });
    expect(notice!.text).toContain(`from a browser or device it had not been used from before: ${FIREFOX}, address ${HOME}, on `);

    expect((await signIn(app, "ann@example.test", FIREFOX)).status).toBe(200);
    // The same browser from another network is a new place to sign in from.
    expect((await signIn(app, "ann@example.test", CHROME(131), "203.0.113.4")).status).toBe(200);
    expect((await notices(app, "ann@example.test")).map((row) => row.kind)).toEqual(["new-sign-in", "new-sign-in"]);
    // A wrong password signs nobody in, and tells nobody.
    expect((await signIn(app, "ann@example.test", "curl/8.5.0", HOME, "not the password")).status).toBe(401);
    expect(await notices(app, "ann@example.test")).toHaveLength(2);
    expect((await get(app, "/_mail/latest?to=ann@example.test")).body.kind).toBe("new-sign-in");
  });

  it("counts an IPv6 client by its /48: another address in it is the same place, another /48 a new one", async () => {
    expect((await post(app, "/api/auth/sign-up/email", signUpBody("ivo@example.test"), as(FIREFOX, "2001:db8:1:2::1"))).status).toBe(200);
    expect((await signIn(app, "ivo@example.test", FIREFOX, "2001:0DB8:0001:ffff:aaaa::9")).status).toBe(200);
    expect(await notices(app, "ivo@example.test")).toEqual([]);
    expect((await signIn(app, "ivo@example.test", FIREFOX, "2001:db8:2::1")).status).toBe(200);
    expect((await notices(app, "ivo@example.test")).map((row) => row.kind)).toEqual(["new-sign-in"]);
  });
});

// The device table on every database family above; what changed, on one.
describe("factor-changed notices", () => {
  let app: Started;
  beforeAll(async () => {
    app = await start(sqliteMemory(), { notices: { newSignIn: true, factorChanged: true } });
  }, 60_000);
  afterAll(() => app?.close());

  it("mails a password change and a reset", async () => {
    const up = await post(app, "/api/auth/sign-up/email", signUpBody("ben@example.test"), as(FIREFOX));
    const wrong = await post(app, "/api/auth/change-password", { currentPassword: "not it", newPassword: "another long passphrase" }, as(FIREFOX, HOME, up.cookie));
    expect(wrong.status).toBe(400);
    expect(await notices(app, "ben@example.test")).toEqual([]);
    const changed = await post(app, "/api/auth/change-password", { currentPassword: PASSWORD, newPassword: "another long passphrase" }, as(FIREFOX, HOME, up.cookie));
    expect(changed.status).toBe(200);
    expect(await notices(app, "ben@example.test")).toEqual([
      expect.objectContaining({ kind: "factor-changed", subject: "Your Notice App sign-in settings changed", text: expect.stringContaining("The password was changed for your account on ") }),
    ]);

    expect((await post(app, "/api/auth/request-password-reset", { email: "ben@example.test", redirectTo: "/reset" })).status).toBe(200);
    await mailOf(app).flush();
    const link = (await get(app, "/_mail/latest?to=ben@example.test")).body.link as string;
    const token = new URL((await get(app, link)).headers.get("location")!).searchParams.get("token");
    expect((await post(app, "/api/auth/reset-password", { newPassword: "a third long passphrase", token })).status).toBe(200);
    expect((await notices(app, "ben@example.test")).map((row) => row.text.split("\n")[2])).toEqual([
      expect.stringMatching(/^The password was changed/),
      expect.stringMatching(/^The password was reset/),
    ]);
  });

  it("mails two-factor turned on and off, and a new sign-in only once its second factor passed", async () => {
    const up = await post(app, "/api/auth/sign-up/email", signUpBody("cy@example.test"), as(FIREFOX));
    const enable = await post(app, "/api/auth/two-factor/enable", { password: PASSWORD }, as(FIREFOX, HOME, up.cookie));
    expect(enable.status).toBe(200);
    // Asked for, not on yet: the first code turns it on.
    expect(await notices(app, "cy@example.test")).toEqual([]);
    const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
    const session = jar(up.cookie, enable.cookie);
    expect((await post(app, "/api/auth/two-factor/verify-totp", { code: totp.generate() }, as(FIREFOX, HOME, session))).status).toBe(200);
    expect((await notices(app, "cy@example.test")).map((row) => row.text.split("\n")[2])).toEqual([expect.stringMatching(/^Two-factor sign-in was turned on/)]);

    // The password alone from a new browser is no sign-in yet.
    const first = await signIn(app, "cy@example.test", CHROME(131));
    expect(first.body.twoFactorRedirect).toBe(true);
    expect(await notices(app, "cy@example.test")).toHaveLength(1);
    const second = await post(app, "/api/auth/two-factor/verify-totp", { code: totp.generate() }, as(CHROME(131), HOME, first.cookie));
    expect(second.status).toBe(200);
    expect((await notices(app, "cy@example.test")).map((row) => row.kind)).toEqual(["factor-changed", "new-sign-in"]);

    const disable = await post(app, "/api/auth/two-factor/disable", { password: PASSWORD }, as(CHROME(131), HOME, jar(first.cookie, second.cookie)));
    expect(disable.status).toBe(200);
    const last = (await notices(app, "cy@example.test")).at(-1)!;
    expect(last.kind).toBe("factor-changed");
    expect(last.text).toContain("Two-factor sign-in was turned off");
  });
});

describe("security notices off", () => {
  let app: Started;
  beforeAll(async () => {
    app = await start(sqliteMemory(), {});
  }, 60_000);
  afterAll(() => app?.close());

  it("sends none by default, and remembers no device", async () => {
    const up = await post(app, "/api/auth/sign-up/email", signUpBody("dee@example.test"), as(FIREFOX));
    expect((await signIn(app, "dee@example.test", CHROME(131), "203.0.113.4")).status).toBe(200);
    expect((await post(app, "/api/auth/change-password", { currentPassword: PASSWORD, newPassword: "another long passphrase" }, as(FIREFOX, HOME, up.cookie))).status).toBe(200);
    const enable = await post(app, "/api/auth/two-factor/enable", { password: "another long passphrase" }, as(FIREFOX, HOME, up.cookie));
    const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
    expect((await post(app, "/api/auth/two-factor/verify-totp", { code: totp.generate() }, as(FIREFOX, HOME, jar(up.cookie, enable.cookie)))).status).toBe(200);
    expect(await notices(app, "dee@example.test")).toEqual([]);
    await expect(app.db.selectFrom("trellis_mail_device" as never).selectAll().execute()).rejects.toThrow(/no such table/);
  });

  it("refuses a notice it does not know, or notices without .auth()", () => {
    const bad = errorOf(() => new App({ baseUrl: ORIGIN, db: sqliteMemory() }).mail({ from: "a@example.test", notices: { newSignIn: true, factorChanged: "yes", oldSignIn: true } as never }).build());
    expect(bad.code).toBe("MAIL_BAD_OPTION");
    expect(bad.message).toContain(`.mail() notices.factorChanged must be true or false, got "yes"`);
    expect(bad.message).toContain(".mail() notices.oldSignIn is not a notice (newSignIn, factorChanged)");
    expect(bad.message).toContain(".mail() notices (newSignIn, factorChanged) need .auth()");
  });
});
