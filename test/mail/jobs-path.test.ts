import { afterEach, describe, expect, it, vi } from "vitest";
import type { AppPlugin } from "../../kernel/index.js";
import type { OutgoingMail } from "../../plugins/mail/index.js";
import { sqliteMemory } from "../support/app.js";
import { mailApp, mailOf, post, signUpBody } from "./fixture.js";

/**
 * With a `jobs` service (the shape of the jobs plugin: define at build, send at request time),
 * mail defines `mail.send` and queues through it; the job's handler throws on a failed send so the
 * jobs engine retries. A stand-in jobs plugin records what mail does with it.
 */
function fakeJobs() {
  const handlers = new Map<string, (input: unknown) => Promise<unknown>>();
  const defined: { name: string; options: Record<string, unknown> }[] = [];
  const sent: { name: string; data: unknown }[] = [];
  const plugin: AppPlugin = {
    name: "jobs",
    stage: "feature",
    build(ctx) {
      ctx.provide("jobs", {
        define: (name: string, options: Record<string, unknown>, handler: (input: unknown) => Promise<unknown>) => {
          defined.push({ name, options });
          handlers.set(name, handler);
        },
        send: async (name: string, data: unknown) => void sent.push({ name, data }),
        // A stand-in with only the members mail uses, not the whole typed service.
      } as never);
    },
  };
  return { plugin, defined, sent, run: (name: string, data: unknown) => handlers.get(name)!(data) };
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const app of opened.splice(0)) await app.close();
});

describe("mail through the jobs service", () => {
  it("defines mail.send with retries, queues each message as a job, and throws from a failed attempt", async () => {
    const jobs = fakeJobs();
    const delivered: OutgoingMail[] = [];
    let failing = true;
    const transport = {
      send: async (message: OutgoingMail) => {
        if (failing) throw new Error("421 try later");
        delivered.push(message);
      },
    };
    const app = await mailApp(sqliteMemory(), { transport }).use(jobs.plugin).start();
    opened.push(app);
    expect(jobs.defined).toEqual([{ name: "mail.send", options: expect.objectContaining({ retry: expect.any(Number) }) }]);

    expect((await post(app, "/api/auth/sign-up/email", signUpBody("jo@example.test"))).status).toBe(200);
    // The mail is queued beside the response, not before it.
    await vi.waitFor(() => expect(jobs.sent).toHaveLength(1), { timeout: 5_000, interval: 10 });
    expect(jobs.sent[0]).toMatchObject({ name: "mail.send", data: { to: "jo@example.test", kind: "verify-email" } });

    await expect(jobs.run("mail.send", jobs.sent[0]!.data)).rejects.toThrow("421 try later");
    failing = false;
    await jobs.run("mail.send", { data: jobs.sent[0]!.data });
    expect(delivered.map((mail) => mail.to)).toEqual(["jo@example.test"]);
    const rows = await app.db.selectFrom("trellis_mail" as never).selectAll().execute();
    expect(rows).toEqual([expect.objectContaining({ state: "sent", error: null })]);
    await mailOf(app).flush();
  });
});

describe("the auth-options extension point", () => {
  it("refuses an extension once the auth library exists", async () => {
    let late: ((step: (options: object) => object) => void) | undefined;
    const plugin: AppPlugin = {
      name: "late",
      optionalDependencies: ["auth"],
      build(ctx) {
        const extensions = ctx.need("auth-options");
        late = (step) => extensions.extend(step as never);
      },
    };
    const app = await mailApp(sqliteMemory(), {}).use(plugin).start();
    opened.push(app);
    let error: any;
    try {
      late!((options) => options);
    } catch (caught) {
      error = caught;
    }
    expect(error?.code).toBe("AUTH_EXTEND_LATE");
  });
});
