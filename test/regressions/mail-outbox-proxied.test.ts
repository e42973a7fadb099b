/**
 * The development outbox (/_mail/latest) hands out sign-in and reset links, so it answers loopback
 * callers only. A request relayed by a proxy or a tunnel on the same machine (ngrok, a dev reverse
 * proxy) also arrives from loopback: it was answered, giving anyone with the tunnel's address the
 * links of every account. Such a request says it was relayed (X-Forwarded-For, Forwarded,
 * X-Real-IP) and is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { mailApp, mailOf, post, signUpBody } from "../mail/fixture.js";

describe("the development outbox behind a proxy or tunnel", () => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof mailApp>["start"]>>;

  beforeAll(async () => {
    db = await openDatabase("sqlite");
    app = await mailApp({ dialect: db.dialect, kind: db.kind }, {}).start();
    expect((await post(app, "/api/auth/sign-up/email", signUpBody("una@example.test"))).status).toBe(200);
    await mailOf(app).flush();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const latest = (headers: Record<string, string>) =>
    app.handle(new Request("http://localhost:3000/_mail/latest?to=una@example.test", { headers }), { clientAddress: "127.0.0.1" });

  it("refuses a loopback request that a proxy relayed, and answers one made on the machine", async () => {
    const relayed: Record<string, string>[] = [{ "x-forwarded-for": "203.0.113.9" }, { forwarded: "for=203.0.113.9;proto=https" }, { "x-real-ip": "203.0.113.9" }];
    for (const headers of relayed) {
      const refused = await latest(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(await refused.json()).toEqual({ code: "FORBIDDEN", status: 403, message: "The development outbox answers requests made on this machine only, not relayed by a proxy or tunnel" });
    }
    const local = await latest({});
    expect(local.status).toBe(200);
    expect(await local.json()).toMatchObject({ to: "una@example.test", kind: "verify-email" });
  });
});
