import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { errorOf, rpc, sqliteMemory } from "../support/app.js";
import { get, mailApp, mailOf, post, signUpBody } from "./fixture.js";

/**
 * The development outbox on every database family: each message is a row of the mail table (its
 * state and link), the latest one per address is readable at /_mail/latest by loopback callers,
 * and the admin API lists them and sends a reset on a user's behalf.
 */
describe.each(families())("mail outbox on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<typeof start>>;
  let admin: string;
  let user: { id: string; cookie: string };

  function start() {
    return mailApp({ dialect: db.dialect, kind: db.kind }, {}).start();
  }

  async function signUp(email: string) {
    const answer = await post(app, "/api/auth/sign-up/email", signUpBody(email));
    expect(answer.status).toBe(200);
    return { id: answer.body.user.id as string, cookie: answer.cookie };
  }

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await start();
    const boss = await signUp("boss@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", boss.id).execute();
    admin = boss.cookie;
    user = await signUp("una@example.test");
    await mailOf(app).flush();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("stores each message with its state and link", async () => {
    const rows = await app.db.selectFrom("trellis_mail" as never).selectAll().where("to_address" as never, "=", "una@example.test" as never).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "verify-email", transport: "outbox", state: "sent", attempts: 1, error: null, subject: "Verify your email for Test <App>" });
    expect((rows[0] as { link: string }).link).toMatch(/^http:\/\/localhost:3000\/api\/auth\/verify-email\?token=/);
  });

  it("answers the latest message to an address at /_mail/latest, to loopback callers only", async () => {
    const latest = await get(app, "/_mail/latest?to=una@example.test");
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ kind: "verify-email", to: "una@example.test", state: "sent" });
    expect((await get(app, latest.body.link)).status).toBe(302);
    expect((await get(app, "/api/auth/get-session", user.cookie)).body.user.emailVerified).toBe(true);

    expect((await get(app, "/_mail/latest")).body).toEqual({ code: "BAD_REQUEST", status: 400, message: "Name the recipient: ?to=<address>" });
    expect((await get(app, "/_mail/latest?to=nobody@example.test")).status).toBe(404);
    const remote = await app.handle(new Request("http://localhost:3000/_mail/latest?to=una@example.test"), { clientAddress: "203.0.113.9" });
    expect(remote.status).toBe(403);
    const local = await app.handle(new Request("http://localhost:3000/_mail/latest?to=una@example.test"), { clientAddress: "127.0.0.1" });
    expect(local.status).toBe(200);
  });

  it("resets a password through the outbox link", async () => {
    expect((await post(app, "/api/auth/request-password-reset", { email: "una@example.test", redirectTo: "/reset" })).status).toBe(200);
    await mailOf(app).flush();
    const latest = await get(app, "/_mail/latest?to=una@example.test");
    expect(latest.body.kind).toBe("reset-password");
    const landing = await get(app, latest.body.link);
    const token = new URL(landing.headers.get("location")!).searchParams.get("token");
    expect((await post(app, "/api/auth/reset-password", { newPassword: "a brand new passphrase", token })).status).toBe(200);
    expect((await get(app, "/api/auth/get-session", user.cookie)).body).toBeNull();
    expect((await post(app, "/api/auth/sign-in/email", { email: "una@example.test", password: "a brand new passphrase" })).status).toBe(200);
  });

  it("lists the outbox and sends a reset for a user under the admin rules", async () => {
    const signedOut = await rpc(app, "_admin.mail.outbox", {});
    expect(signedOut.status).toBe(401);
    const plain = await signUp("vic@example.test");
    expect((await rpc(app, "_admin.mail.outbox", {}, { cookie: plain.cookie })).status).toBe(403);
    expect((await rpc(app, "_admin.mail.sendPasswordReset", { userId: user.id }, { cookie: plain.cookie })).status).toBe(403);

    const sent = await rpc(app, "_admin.mail.sendPasswordReset", { userId: user.id, redirectTo: "/reset" }, { cookie: admin });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ sent: true, to: "una@example.test" });
    expect((await rpc(app, "_admin.mail.sendPasswordReset", { userId: "nobody" }, { cookie: admin })).status).toBe(404);
    await mailOf(app).flush();

    const listed = await rpc(app, "_admin.mail.outbox", { to: "una@example.test" }, { cookie: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.map((row: { kind: string }) => row.kind)).toEqual(["reset-password", "reset-password", "verify-email"]);
    expect(listed.body[0]).toMatchObject({ to: "una@example.test", state: "sent", transport: "outbox", link: expect.stringContaining("/api/auth/reset-password/") });
    expect(listed.body[0]).not.toHaveProperty("text");
    const one = await rpc(app, "_admin.mail.get", { id: listed.body[0].id }, { cookie: admin });
    expect(one.body.text).toContain(listed.body[0].link);
    expect((await rpc(app, "_admin.mail.get", { id: "missing" }, { cookie: admin })).status).toBe(404);
    expect((await rpc(app, "_admin.mail.outbox", { take: 0 }, { cookie: admin })).status).toBe(400);
  });
});

describe("mail build rules", () => {
  it("refuses production without a transport, with a code", () => {
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      const error = errorOf(() => mailApp(sqliteMemory(), {}).build());
      expect(error.code).toBe("MAIL_TRANSPORT_MISSING");
      expect(error.message).toContain("SMTP_URL");
    } finally {
      process.env.NODE_ENV = previous;
    }
  });

  it("names a wrong transport, sender, limit or template", () => {
    expect(errorOf(() => mailApp(sqliteMemory(), { transport: "http://mail.example" }).build()).code).toBe("MAIL_BAD_TRANSPORT");
    expect(errorOf(() => mailApp(sqliteMemory(), { from: "nobody" }).build()).code).toBe("MAIL_BAD_OPTION");
    expect(errorOf(() => mailApp(sqliteMemory(), { limits: { perAddress: 0 } }).build()).message).toContain("limits.perAddress must be a whole number above 0");
    expect(errorOf(() => mailApp(sqliteMemory(), { templates: { welcome: () => ({}) } as never }).build()).message).toContain("templates.welcome is not a message kind");
    expect(errorOf(() => mailApp(sqliteMemory(), { auth: { verifyEmail: false, requireEmailVerification: true } }).build()).message).toContain("nobody could ever verify");
  });

  it("hides the SMTP password in a build error", () => {
    const error = errorOf(() => mailApp(sqliteMemory(), { transport: "smpt://user:hunter2@mail.example:587" }).build());
    expect(error.code).toBe("MAIL_BAD_TRANSPORT");
    expect(error.message).not.toContain("hunter2");
  });
});
