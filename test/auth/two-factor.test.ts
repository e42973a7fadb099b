// Two-factor sign-in (schema().auth({ twoFactor: true })): TOTP enrolment through an otpauth URL,
// codes computed here with `otpauth` as an authenticator app would, backup codes, trusted devices,
// the account lockout that bounds guessing, and `.admin({ requireTwoFactor: true })`.
import * as OTPAuth from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, cookieOf, jar } from "../support/auth.js";

const v1 = schema("1").auth({ twoFactor: true }).build();
const PASSWORD = "correct-horse-battery-staple";
// The second factor is under test, not password hashing: a cheap stand-in keeps the many sign-ins fast.
const FAST_HASH = { hash: async (password: string) => `plain:${password}`, verify: async ({ hash, password }: { hash: string; password: string }) => hash === `plain:${password}` };

type Built = Awaited<ReturnType<typeof start>>;
const start = () =>
  new App({ name: "Trellis Test", baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }) })
    .schema(v1)
    .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true, password: FAST_HASH } })
    .admin({ requireTwoFactor: true, ui: false })
    .start();

let app: Built;
beforeAll(async () => {
  app = await start();
}, 30_000);
afterAll(() => app?.close());

async function call(path: string, body: unknown, cookie = ""): Promise<{ status: number; body: any; cookie: string }> {
  const response = await app.handle(
    new Request(`${ORIGIN}/api/auth${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, ...(cookie && { cookie }) },
      body: JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, cookie: cookieOf(response) };
}


/** Signs up, enrols TOTP and confirms it with a first code: the user as an authenticator app sees them. */
async function enrolled(email: string) {
  const up = await call("/sign-up/email", { email, password: PASSWORD, name: email.split("@")[0] });
  expect(up.status).toBe(200);
  const enable = await call("/two-factor/enable", { password: PASSWORD }, up.cookie);
  expect(enable.status).toBe(200);
  const uri = new URL(enable.body.totpURI);
  expect(uri.protocol).toBe("otpauth:");
  expect(uri.host).toBe("totp");
  expect(uri.searchParams.get("issuer")).toBe("Trellis Test");
  const totp = OTPAuth.URI.parse(enable.body.totpURI) as OTPAuth.TOTP;
  const backupCodes = enable.body.backupCodes as string[];
  expect(backupCodes.length).toBeGreaterThanOrEqual(8);
  // Not on until a first code proves the app holds the secret.
  const before = await call("/sign-in/email", { email, password: PASSWORD });
  expect(before.body.twoFactorRedirect).toBeUndefined();
  const confirm = await call("/two-factor/verify-totp", { code: totp.generate() }, jar(up.cookie, enable.cookie));
  expect(confirm.status).toBe(200);
  return { userId: up.body.user.id as string, totp, backupCodes };
}

/** The first step of a sign-in: with two-factor on, no session yet, only the pending challenge cookie. */
async function passwordStep(email: string, cookie = "") {
  const first = await call("/sign-in/email", { email, password: PASSWORD }, cookie);
  expect(first.status).toBe(200);
  return first;
}

describe("two-factor", () => {
  it("enrols by otpauth URL, then asks every password sign-in for a code", async () => {
    const { totp } = await enrolled("ada@example.test");
    const first = await passwordStep("ada@example.test");
    expect(first.body).toMatchObject({ twoFactorRedirect: true });
    expect(first.cookie).not.toMatch(/session_token=[^;]+/);
    // The challenge cookie is no session: the app sees nobody.
    expect((await app.handle(new Request(`${ORIGIN}/api/auth/get-session`, { headers: { cookie: first.cookie } }))).status).toBe(200);
    const signedIn = await call("/two-factor/verify-totp", { code: totp.generate() }, first.cookie);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.email).toBe("ada@example.test");
    expect(signedIn.cookie).toMatch(/session_token=/);
  });

  it("refuses a wrong code with 401 and no session", async () => {
    const { totp } = await enrolled("bob@example.test");
    const first = await passwordStep("bob@example.test");
    const wrong = String((Number(totp.generate()) + 1) % 1_000_000).padStart(6, "0");
    const refused = await call("/two-factor/verify-totp", { code: wrong }, first.cookie);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/invalid/i);
    expect(refused.cookie).not.toMatch(/session_token=[^;]+/);
  });

  it("takes each backup code once", async () => {
    const { backupCodes } = await enrolled("cy@example.test");
    const first = await passwordStep("cy@example.test");
    const used = await call("/two-factor/verify-backup-code", { code: backupCodes[0] }, first.cookie);
    expect(used.status).toBe(200);
    const again = await passwordStep("cy@example.test");
    const replayed = await call("/two-factor/verify-backup-code", { code: backupCodes[0] }, again.cookie);
    expect(replayed.status).toBe(401);
    expect((await call("/two-factor/verify-backup-code", { code: backupCodes[1] }, again.cookie)).status).toBe(200);
  });

  it("skips the code on a trusted device, and only there", async () => {
    const { totp } = await enrolled("dee@example.test");
    const first = await passwordStep("dee@example.test");
    const trusted = await call("/two-factor/verify-totp", { code: totp.generate(), trustDevice: true }, first.cookie);
    expect(trusted.status).toBe(200);
    const device = trusted.cookie.split("; ").filter((pair) => pair.includes("trust_device")).join("; ");
    expect(device).toMatch(/trust_device=.+/);
    const again = await passwordStep("dee@example.test", device);
    expect(again.body.twoFactorRedirect).toBeUndefined();
    expect(again.body.user.email).toBe("dee@example.test");
    const elsewhere = await passwordStep("dee@example.test");
    expect(elsewhere.body).toMatchObject({ twoFactorRedirect: true });
  });

  it("locks the account after ten wrong codes: guessing a 6-digit code is bounded, a right code then fails too", async () => {
    const { totp } = await enrolled("eve@example.test");
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      // A fresh challenge each time: the lockout counts per account, across challenges.
      const first = await passwordStep("eve@example.test");
      statuses.push((await call("/two-factor/verify-totp", { code: String(100000 + i) }, first.cookie)).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    const first = await passwordStep("eve@example.test");
    const locked = await call("/two-factor/verify-totp", { code: totp.generate() }, first.cookie);
    expect(locked.status).toBe(429);
    expect(locked.body.message).toMatch(/locked/i);
  });
});

describe(".admin({ requireTwoFactor: true })", () => {
  async function makeAdmin(userId: string) {
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", userId).execute();
  }

  it("refuses an admin whose account has no second factor with 403, and says why", async () => {
    const up = await call("/sign-up/email", { email: "root@example.test", password: PASSWORD, name: "root" });
    await makeAdmin(up.body.user.id);
    const refused = await rpc(app, "_admin.meta", undefined, { cookie: up.cookie });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/two-factor/i);
  });

  it("lets the same admin in once two-factor is on", async () => {
    const { userId, totp } = await enrolled("ops@example.test");
    await makeAdmin(userId);
    const first = await passwordStep("ops@example.test");
    const session = await call("/two-factor/verify-totp", { code: totp.generate() }, first.cookie);
    const allowed = await rpc(app, "_admin.meta", undefined, { cookie: session.cookie });
    expect(allowed.status).toBe(200);
  });

  it("still answers a signed-out caller 401 and a non-admin 403", async () => {
    expect((await rpc(app, "_admin.meta")).status).toBe(401);
    const up = await call("/sign-up/email", { email: "user@example.test", password: PASSWORD, name: "user" });
    expect((await rpc(app, "_admin.meta", undefined, { cookie: up.cookie })).status).toBe(403);
  });
});

describe("the admin API on a user's second factor", () => {
  it("shows whether two-factor is on, and resets it: the next sign-in asks only the password", async () => {
    const { userId: adminId, totp: adminTotp } = await enrolled("chief@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", adminId).execute();
    const first = await passwordStep("chief@example.test");
    const admin = (await call("/two-factor/verify-totp", { code: adminTotp.generate() }, first.cookie)).cookie;
    const { userId } = await enrolled("lost-phone@example.test");
    const before = await rpc(app, "_admin.users.get", { id: userId }, { cookie: admin });
    expect(before.status).toBe(200);
    expect(before.body.twoFactor).toEqual({ enabled: true });
    expect(JSON.stringify(before.body)).not.toMatch(/secret|backupCodes/);
    expect((await rpc(app, "_admin.users.resetTwoFactor", { id: userId }, { cookie: admin })).body).toEqual({ reset: true });
    expect((await rpc(app, "_admin.users.get", { id: userId }, { cookie: admin })).body.twoFactor).toEqual({ enabled: false });
    const plain = await passwordStep("lost-phone@example.test");
    expect(plain.body.twoFactorRedirect).toBeUndefined();
    expect(plain.body.user.id).toBe(userId);
    expect(await app.db.selectFrom("twoFactor").selectAll().where("userId", "=", userId).execute()).toEqual([]);
    expect((await rpc(app, "_admin.users.resetTwoFactor", { id: "nobody" }, { cookie: admin })).status).toBe(404);
  });
});
