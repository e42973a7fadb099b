import * as OTPAuth from "otpauth";
import { afterEach, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "../../presets/testing.js";
import type { MailNotices } from "../../plugins/mail/index.js";
import { jar } from "../support/auth.js";

/**
 * The factor-changed notice when an administrator changes a user's factors: `_admin.users.resetTwoFactor`
 * and `_admin.users.deletePasskey` (which write the tables directly), the auth library's
 * `/admin/set-user-password`, and a change made while impersonating. The user is told, with the
 * wording that an administrator made the change; the admin is told nothing about someone else.
 */
const v1 = schema("1").auth({ twoFactor: true, passkeys: true }).build();
const PASSWORD = "correct-horse-battery-staple";
// The notice is under test, not password hashing.
const FAST_HASH = {
  hash: async (password: string) => `plain:${password}`,
  verify: async ({ hash, password }: { hash: string; password: string }) => hash === `plain:${password}`,
};

function createApp({ db, secret }: TestAppInput, notices: MailNotices = { factorChanged: true }) {
  return new App({ name: "Notice App", baseUrl: "http://localhost:3000", db })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true, password: FAST_HASH } })
    .mail({ from: "Notice App <no-reply@example.test>", notices })
    .admin({ ui: false });
}

type T = TestApp<typeof createApp>;
type User = Actor<T extends TestApp<infer R> ? R : never>;

let t: T | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The factor-changed notices sent to `to`, oldest first, as their leading sentence. */
async function factorNotices(to: string): Promise<string[]> {
  const rows = await t!.outbox({ to });
  return rows.filter((row) => row.kind === "factor-changed").reverse().map((row) => row.text.split("\n")[2]!.replace(/ on (\w{3}, \d{2} \w{3} \d{4} [\d:]+ GMT)\.$/, "."));
}

/** Every factor-changed notice the app sent, to anyone. */
async function allFactorNotices(): Promise<string[]> {
  return (await t!.outbox()).filter((row) => row.kind === "factor-changed").map((row) => row.to);
}

async function post(actor: Pick<User, "fetch">, path: string, body: unknown, cookie?: string): Promise<{ status: number; body: any; cookie: string }> {
  const response = await actor.fetch(`/api/auth${path}`, { method: "POST", headers: { "content-type": "application/json", ...(cookie && { cookie }) }, body: JSON.stringify(body) });
  const text = await response.text();
  const set = response.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
  return { status: response.status, body: text ? JSON.parse(text) : null, cookie: set };
}


/** Turns two-factor on for `user` as an authenticator app would: enable, then a first code. */
async function enrol(user: User): Promise<void> {
  const enable = await post(user, "/two-factor/enable", { password: PASSWORD });
  expect(enable.status).toBe(200);
  const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
  const session = jar(user.headers.get("cookie") ?? "", enable.cookie);
  expect((await post(user, "/two-factor/verify-totp", { code: totp.generate() }, session)).status).toBe(200);
}

/** A passkey row as `@better-auth/passkey` stores one (registering one takes a browser: test/auth/passkeys.test.ts). */
async function passkeyOf(userId: string, id: string): Promise<void> {
  await t!.app.db
    .insertInto("passkey")
    .values({ id, name: "laptop", publicKey: "cHVibGlj", userId, credentialID: `credential-${id}`, counter: 0, deviceType: "singleDevice", backedUp: false, transports: "internal", createdAt: new Date(), aaguid: null })
    .execute();
}

describe("factor-changed notices for an administrator's changes", () => {
  // The file's first app migrates its schema unless a run before left its dump: a wider bound.
  it("mails the user whose two-factor an admin reset, naming it, and only when it was on", { timeout: 90_000 }, async () => {
    t = await testApp(createApp);
    const ann = await t.signUp({ email: "ann@example.test" });
    await enrol(ann);
    const admin = await t.asAdmin({ email: "admin@example.test" });
    expect(await admin.client._admin.users.resetTwoFactor({ id: ann.user.id })).toEqual({ reset: true });
    expect(await factorNotices("ann@example.test")).toEqual([
      "Two-factor sign-in was turned on for your account.",
      "Two-factor sign-in was turned off for your account by an administrator.",
    ]);
    const [last] = await t.outbox({ to: "ann@example.test" });
    expect(last).toMatchObject({ subject: "Your Notice App sign-in settings changed" });
    expect(last!.text).toContain("If you asked for it, there is nothing to do. If not, reset your password now and tell us.");
    expect(last!.html).toContain("by an administrator");
    // Reset again: nothing was on, nothing to tell.
    expect(await admin.client._admin.users.resetTwoFactor({ id: ann.user.id })).toEqual({ reset: true });
    await expect(admin.client._admin.users.resetTwoFactor({ id: "nobody" })).rejects.toMatchObject({ status: 404 });
    expect(await allFactorNotices()).toEqual(["ann@example.test", "ann@example.test"]);
  });

  it("mails the owner of a passkey an admin deleted", async () => {
    t = await testApp(createApp);
    const ben = await t.signUp({ email: "ben@example.test" });
    await passkeyOf(ben.user.id, "pk-ben");
    const admin = await t.asAdmin({ email: "admin@example.test" });
    expect(await admin.client._admin.users.deletePasskey({ id: "pk-ben" })).toEqual({ deleted: 1 });
    expect(await factorNotices("ben@example.test")).toEqual(["A passkey was removed for your account by an administrator."]);
    await expect(admin.client._admin.users.deletePasskey({ id: "pk-ben" })).rejects.toMatchObject({ status: 404 });
    expect(await allFactorNotices()).toEqual(["ben@example.test"]);
  });

  it("mails the target of /admin/set-user-password, never the admin who set it", async () => {
    t = await testApp(createApp);
    const cy = await t.signUp({ email: "cy@example.test" });
    const admin = await t.asAdmin({ email: "admin@example.test" });
    // A user without the admin role is refused, and nobody is told.
    expect((await post(cy, "/admin/set-user-password", { userId: admin.user.id, newPassword: "a password cy chose" })).status).toBe(403);
    expect(await allFactorNotices()).toEqual([]);

    expect(await post(admin, "/admin/set-user-password", { userId: cy.user.id, newPassword: "a new long passphrase" })).toMatchObject({ status: 200, body: { status: true } });
    expect(await factorNotices("cy@example.test")).toEqual(["The password was changed for your account by an administrator."]);
    expect(await factorNotices("admin@example.test")).toEqual([]);
    expect((await t.signIn("cy@example.test", "a new long passphrase")).user.id).toBe(cy.user.id);
    // An unknown user is 404, and nobody is told.
    expect((await post(admin, "/admin/set-user-password", { userId: "nobody", newPassword: "a new long passphrase" })).status).toBe(404);
    // An admin setting their own password there is told as for their own change.
    expect((await post(admin, "/admin/set-user-password", { userId: admin.user.id, newPassword: "the admin's new passphrase" })).status).toBe(200);
    expect(await factorNotices("admin@example.test")).toEqual(["The password was changed for your account."]);
    expect(await allFactorNotices()).toEqual(["admin@example.test", "cy@example.test"]);
  });

  it("mails the user whose two-factor the library's /admin/update-user turned off, not the admin", async () => {
    t = await testApp(createApp);
    const fay = await t.signUp({ email: "fay@example.test" });
    await enrol(fay);
    const admin = await t.asAdmin({ email: "admin@example.test" });
    expect((await post(admin, "/admin/update-user", { userId: fay.user.id, data: { twoFactorEnabled: false } })).status).toBe(200);
    expect(await factorNotices("fay@example.test")).toEqual([
      "Two-factor sign-in was turned on for your account.",
      "Two-factor sign-in was turned off for your account by an administrator.",
    ]);
    expect(await factorNotices("admin@example.test")).toEqual([]);
  });

  it("says an administrator made a change made while impersonating the user", async () => {
    t = await testApp(createApp);
    const dee = await t.signUp({ email: "dee@example.test" });
    await passkeyOf(dee.user.id, "pk-dee");
    const admin = await t.asAdmin({ email: "admin@example.test" });
    const impersonating = await post(admin, "/admin/impersonate-user", { userId: dee.user.id });
    expect(impersonating.status).toBe(200);
    expect((await post(admin, "/passkey/delete-passkey", { id: "pk-dee" }, jar(impersonating.cookie))).status).toBe(200);
    expect(await factorNotices("dee@example.test")).toEqual(["A passkey was removed for your account by an administrator."]);
    expect(await allFactorNotices()).toEqual(["dee@example.test"]);
  });
});

describe("factor-changed notices off", () => {
  it("mails nobody about an administrator's changes", async () => {
    t = await testApp((input) => createApp(input, {}));
    const eve = await t.signUp({ email: "eve@example.test" });
    await enrol(eve);
    await passkeyOf(eve.user.id, "pk-eve");
    const admin = await t.asAdmin({ email: "admin@example.test" });
    expect(await admin.client._admin.users.resetTwoFactor({ id: eve.user.id })).toEqual({ reset: true });
    expect(await admin.client._admin.users.deletePasskey({ id: "pk-eve" })).toEqual({ deleted: 1 });
    expect((await post(admin, "/admin/set-user-password", { userId: eve.user.id, newPassword: "a new long passphrase" })).status).toBe(200);
    expect(await allFactorNotices()).toEqual([]);
    expect(t.app.sealed.service("factor-notices")).toBeUndefined();
  });
});
