import { afterAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { get, mailApp, mailOf, post, signUpBody } from "../mail/fixture.js";

/**
 * A message's row is written when its delivery starts: on a later turn of the event loop, or when
 * the jobs worker picks the `mail.send` job up. The development outbox asked right after the
 * request that queued a reset answered with the address's previous message (the verification),
 * so the README's reset sample sent no token ("Invalid token") whenever the worker was a moment late.
 */
describe.each([
  ["the in-process queue", false],
  ["jobs", true],
])("/_mail/latest right after a reset is requested, through %s", (_, withJobs) => {
  let app: any;
  afterAll(async () => {
    await app?.close();
  });

  it("answers the reset, not the message before it", async () => {
    const base = mailApp(embedded({ dataDir: "memory://" }), {});
    // A worker that polls rarely: the job waits for it unless a send wakes it.
    app = await (withJobs ? base.jobs({ pollingInterval: 30 }) : base).start();
    expect((await post(app, "/api/auth/sign-up/email", signUpBody("ada@example.test"))).status).toBe(200);
    await mailOf(app).flush();
    expect((await get(app, "/_mail/latest?to=ada@example.test")).body.kind).toBe("verify-email");

    expect((await post(app, "/api/auth/request-password-reset", { email: "ada@example.test", redirectTo: "/reset" })).status).toBe(200);
    const latest = await get(app, "/_mail/latest?to=Ada@example.test");
    expect(latest.status).toBe(200);
    expect(latest.body.kind).toBe("reset-password");
    expect(latest.body.link).toMatch(/\/api\/auth\/reset-password\/[A-Za-z0-9]+\?callbackURL=/);
  });
});
