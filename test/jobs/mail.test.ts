import { afterAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import type { OutgoingMail } from "../../plugins/mail/index.js";
import { mailApp, post, signUpBody } from "../mail/fixture.js";
import { waitFor } from "./support.js";

describe("mail through the real jobs plugin (embedded)", () => {
  let app: any;
  afterAll(async () => {
    await app?.close();
  });

  // Retries themselves are the engine's (jobs.test.ts); mail's first one waits 30 s, too long here.
  it("a sign-up's message becomes a mail.send job with mail's retry policy, delivered by the worker", async () => {
    const delivered: OutgoingMail[] = [];
    const transport = { send: async (message: OutgoingMail) => void delivered.push(message) };
    app = await mailApp(embedded({ dataDir: "memory://" }), { transport }, {}, { onError: () => undefined })
      .jobs({ pollingInterval: 0.5 })
      .start();
    expect((await post(app, "/api/auth/sign-up/email", signUpBody("jo@example.test"))).status).toBe(200);
    const jobs = app.sealed.service("jobs");
    await waitFor("the job", async () => (await jobs.list({ queue: "mail.send" })).length === 1);
    // The definition kept mail's options (pg-boss's names): five retries.
    expect((await jobs.queues()).find((q: any) => q.name === "mail.send")).toMatchObject({ retry: 5 });
    await waitFor("the delivery", () => delivered.length === 1);
    expect(delivered[0]!.to).toBe("jo@example.test");
    const [job] = await jobs.list({ queue: "mail.send" });
    await waitFor("completed", async () => (await jobs.get("mail.send", job.id)).state === "completed");
    expect((await jobs.get("mail.send", job.id)).attempts).toBe(1);
  }, 90_000);
});
