import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { dropPrefix, freshPrefix, hasRedis, openRedis } from "../support/redis.js";
import { redisRateLimitStore } from "../../kernel/redis/index.js";
import type { MailConfig, OutgoingMail } from "../../plugins/mail/index.js";
import { mailApp, mailOf, post, signUpBody } from "./fixture.js";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

/** A transport as slow as a distant SMTP server, counting what it delivers. */
function slowTransport(ms: number) {
  const sent: OutgoingMail[] = [];
  return { sent, send: async (message: OutgoingMail) => void (await new Promise((resolve) => setTimeout(resolve, ms)), sent.push(message)) };
}

async function start(mail: Partial<MailConfig>, auth: Record<string, unknown> = {}) {
  const db: TestDatabase = await openDatabase("sqlite");
  const app = await mailApp({ dialect: db.dialect, kind: db.kind }, { auth: { verifyEmail: false }, ...mail }, auth).start();
  opened.push(db, app);
  return app;
}

const reset = (app: Parameters<typeof post>[0], email: string, clientAddress = "198.51.100.7") =>
  post(app, "/api/auth/request-password-reset", { email }, { clientAddress });

describe("mail abuse limits", () => {
  it("answers 429 past the hourly requests of one client address, known and unknown addresses alike", async () => {
    const app = await start({ limits: { perClient: 3 } });
    await post(app, "/api/auth/sign-up/email", signUpBody("kim@example.test"));
    expect((await reset(app, "kim@example.test")).status).toBe(200);
    expect((await reset(app, "nobody@example.test")).status).toBe(200);
    expect((await reset(app, "kim@example.test")).status).toBe(200);
    const refused = await reset(app, "nobody@example.test");
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: "TOO_MANY_REQUESTS", status: 429, message: "Too many email requests from this address; try again later" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500);
    // Another client is counted on its own.
    expect((await reset(app, "kim@example.test", "198.51.100.8")).status).toBe(200);
    // Sign-in and other auth endpoints are not counted.
    expect((await post(app, "/api/auth/sign-in/email", { email: "kim@example.test", password: "wrong-password-1" }, { clientAddress: "198.51.100.7" })).status).toBe(401);
  });

  it("counts every endpoint of the email-OTP and magic-link plugins, read from the plugins themselves", async () => {
    const app = await start({ auth: { verifyEmail: false, emailOtp: true, magicLink: true }, limits: { perClient: 2 } });
    const client = { clientAddress: "198.51.100.30" };
    for (let i = 0; i < 2; i++) expect((await post(app, "/api/auth/email-otp/send-verification-otp", { email: "kim@example.test", type: "sign-in" }, client)).status).toBe(200);
    // Both send a code; they were outside the count and answered 200 with the budget spent.
    for (const [path, body] of [
      ["/api/auth/email-otp/request-password-reset", { email: "kim@example.test" }],
      ["/api/auth/forget-password/email-otp", { email: "kim@example.test" }],
      ["/api/auth/email-otp/send-verification-otp", { email: "kim@example.test", type: "sign-in" }],
      ["/api/auth/sign-in/magic-link", { email: "kim@example.test" }],
      ["/api/auth/request-password-reset", { email: "kim@example.test" }],
    ] as const) {
      const refused = await post(app, path, body, client);
      expect([path, refused.status]).toEqual([path, 429]);
    }
  });

  it("counts a core endpoint by the sending callback the app configured: sign-in with sendOnSignIn", async () => {
    const app = await start({ auth: { verifyEmail: true }, limits: { perClient: 1 } }, { emailVerification: { sendOnSignIn: true } });
    const client = { clientAddress: "198.51.100.40" };
    expect((await post(app, "/api/auth/sign-in/email", { email: "nobody@example.test", password: "wrong-password-1" }, client)).status).toBe(401);
    expect((await post(app, "/api/auth/sign-in/email", { email: "nobody@example.test", password: "wrong-password-1" }, client)).status).toBe(429);
  });

  it("drops messages past the hourly limit of one address, answering as usual", async () => {
    const transport = slowTransport(0);
    const app = await start({ transport, limits: { perAddress: 2 } });
    await post(app, "/api/auth/sign-up/email", signUpBody("lou@example.test"));
    for (let i = 0; i < 4; i++) expect((await reset(app, "lou@example.test", `198.51.100.${20 + i}`)).status).toBe(200);
    await mailOf(app).flush();
    expect(transport.sent.map((mail) => mail.to)).toEqual(["lou@example.test", "lou@example.test"]);
    // The app's own messages are not auth messages: no per-address limit.
    for (let i = 0; i < 3; i++) await mailOf(app).send({ to: "lou@example.test", subject: "Receipt", text: "Thanks" });
    await mailOf(app).flush();
    expect(transport.sent).toHaveLength(5);
  });

  it("answers a reset for an unknown address exactly like a known one: status, body, timing class, no send", async () => {
    // A 150 ms transport: a send made in the request would show in the known address's timing.
    const transport = slowTransport(150);
    const app = await start({ transport, limits: false });
    await post(app, "/api/auth/sign-up/email", signUpBody("max@example.test"));
    const known = await reset(app, "max@example.test");
    const unknown = await reset(app, "nobody@example.test");
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    expect(unknown.headers.get("content-type")).toBe(known.headers.get("content-type"));

    const timings = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < 8; i++) {
      for (const [kind, email] of [["known", "max@example.test"], ["unknown", "nobody@example.test"]] as const) {
        const began = performance.now();
        await reset(app, email);
        timings[kind].push(performance.now() - began);
      }
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
    expect(median(timings.known)).toBeLessThan(100);
    expect(median(timings.known)).toBeLessThan(median(timings.unknown) * 4 + 20);
    expect(median(timings.unknown)).toBeLessThan(median(timings.known) * 4 + 20);

    await mailOf(app).flush();
    expect(transport.sent.every((mail) => mail.to === "max@example.test")).toBe(true);
    expect(transport.sent).toHaveLength(9);
    const rows = await app.db.selectFrom("trellis_mail" as never).select("to_address" as never).execute();
    expect(rows.map((row) => (row as { to_address: string }).to_address)).not.toContain("nobody@example.test");
  });
});

describe.runIf(hasRedis("mail limits on Redis"))("mail abuse limits across replicas (Redis store)", () => {
  const redis = hasRedis("mail limits on Redis") ? openRedis() : undefined;
  const prefix = freshPrefix("mail");
  afterAll(async () => {
    if (!redis) return;
    await dropPrefix(redis, prefix);
    redis.disconnect();
  });

  it("counts one client's requests on every replica together", async () => {
    const store = redisRateLimitStore(redis!, { prefix });
    const one = await start({ limits: { perClient: 2, store } });
    const two = await start({ limits: { perClient: 2, store } });
    expect((await reset(one, "a@example.test")).status).toBe(200);
    expect((await reset(two, "a@example.test")).status).toBe(200);
    expect((await reset(one, "a@example.test")).status).toBe(429);
    expect((await reset(two, "a@example.test")).status).toBe(429);
  });
});
