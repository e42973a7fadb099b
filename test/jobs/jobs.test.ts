import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RpcError } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { jobFamilies, openJobsDatabase, sleep, waitFor } from "./support.js";

const v1 = schema("1")
  .table("account", (t) => ({ id: t.serial().primaryKey(), email: t.text() }))
  .build();

describe.each(jobFamilies())("jobs on %s", (family) => {
  let database: Awaited<ReturnType<typeof openJobsDatabase>>;
  let built: any;
  const mailed: string[] = [];
  const flaky: { attempt: number; at: number }[] = [];
  const dead: unknown[] = [];
  const spaced: number[] = [];
  let contextSeen: { user: unknown; hasDb: boolean } | undefined;
  const reported: { message: string; source: string }[] = [];

  beforeAll(async () => {
    database = await openJobsDatabase(family);
    const app = new App({ db: { dialect: database.dialect, kind: database.kind }, onError: (error, info) => void reported.push({ message: (error as Error).message, source: info.source }) })
      .schema(v1)
      .jobs({ schema: database.jobsSchema, pollingInterval: 0.5 })
      .job("welcome", { input: z.object({ email: z.string().email() }) }, async ({ data, context }) => {
        contextSeen = { user: context.user, hasDb: typeof context.db.selectFrom === "function" };
        mailed.push(data.email);
      })
      .job("dead", {}, ({ data }) => void dead.push(data))
      .job("flaky", { retry: 2, backoff: false, deadLetter: "dead" }, ({ job }) => {
        flaky.push({ attempt: job.attempt, at: Date.now() });
        throw new Error(`boom ${job.attempt}`);
      })
      .job("spaced", { retry: 1, backoff: { delay: 1, exponential: false } }, ({ job }) => {
        spaced.push(Date.now());
        if (job.attempt === 1) throw new Error("first attempt fails");
      })
      .job("later", {}, () => undefined)
      .procedure("signup", (base) =>
        base.input(z.object({ email: z.string(), fail: z.boolean().optional() })).handler(async ({ input, context }) => {
          return context.db.transact(async (trx) => {
            const row = await trx.insertInto("account").values({ email: input.email }).returningAll().executeTakeFirstOrThrow();
            await context.jobs.send("welcome", { email: input.email });
            if (input.fail) throw new RpcError("CONFLICT", { message: "rolled back on purpose" });
            return row;
          });
        }),
      )
      .procedure("badSend", (base) => base.handler(({ context }) => context.jobs.send("welcome", { email: "not an email" })));
    built = app.build();
    await built.migrator.migrateToLatest();
  }, 60_000);

  afterAll(async () => {
    await built?.close();
    await database?.close();
  });

  it("a job sent in a transaction that rolls back does not exist; one that commits runs once", async () => {
    const failed = await rpc(built, "signup", { email: "gone@example.com", fail: true });
    expect(failed.status).toBe(409);
    const ok = await rpc(built, "signup", { email: "kept@example.com" });
    expect(ok.status).toBe(200);
    await waitFor("the welcome job", () => mailed.length >= 1);
    await sleep(700);
    expect(mailed).toEqual(["kept@example.com"]);
    const jobs = built.sealed.service("jobs");
    const rows = await jobs.list({ queue: "welcome" });
    expect(rows.map((row: any) => row.data)).toEqual([{ email: "kept@example.com" }]);
    expect(rows[0].state).toBe("completed");
    expect(contextSeen).toEqual({ user: null, hasDb: true });
  });

  it("data the job's schema refuses is a 400 at send, naming the field", async () => {
    const response = await rpc(built, "badSend");
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('job "welcome": invalid data (email:');
  });

  it("retries, then the failed (dead letter) state with the error, the data passed to the dead-letter job, and retry by hand", async () => {
    const jobs = built.sealed.service("jobs");
    const id = await jobs.send("flaky", { n: 1 });
    await waitFor("the dead letter", () => dead.length === 1);
    expect(flaky.map((f) => f.attempt)).toEqual([1, 2, 3]);
    expect(dead).toEqual([{ n: 1 }]);
    expect(reported).toEqual(expect.arrayContaining([{ message: "boom 1", source: "job" }, { message: "boom 3", source: "job" }]));
    const record = await jobs.get("flaky", id);
    expect(record).toMatchObject({ state: "failed", attempts: 3, maxAttempts: 3, error: "boom 3", data: { n: 1 } });
    expect(await jobs.retry("flaky", id)).toBe(true);
    await waitFor("the hand-made retry", () => flaky.length === 4);
    await waitFor("the failed state again", async () => (await jobs.get("flaky", id)).state === "failed");
    expect((await jobs.get("flaky", id)).error).toBe("boom 4");
    expect(await jobs.retry("flaky", "00000000-0000-0000-0000-000000000000")).toBe(false);
  }, 45_000);

  it("waits the backoff delay between attempts", async () => {
    await built.sealed.service("jobs").send("spaced", {});
    await waitFor("the retry", () => spaced.length === 2);
    expect(spaced[1]! - spaced[0]!).toBeGreaterThanOrEqual(900);
  }, 30_000); // beyond waitFor's own 20 s, so a retry that never comes fails with its message

  it("cancels a job that has not run; a finished or unknown one is not cancelled", async () => {
    const jobs = built.sealed.service("jobs");
    const id = await jobs.send("later", {}, { startAfter: 3600 });
    expect((await jobs.get("later", id)).state).toBe("created");
    expect(await jobs.cancel("later", id)).toBe(true);
    expect((await jobs.get("later", id)).state).toBe("cancelled");
    expect(await jobs.cancel("later", id)).toBe(false);
    expect(await jobs.cancel("later", "not-a-uuid")).toBe(false);
  });

  it("a singleton key drops a second send in the same window", async () => {
    const jobs = built.sealed.service("jobs");
    const first = await jobs.send("later", {}, { startAfter: 3600, singletonKey: "k", singletonSeconds: 3600 });
    const second = await jobs.send("later", {}, { startAfter: 3600, singletonKey: "k", singletonSeconds: 3600 });
    expect(first).toEqual(expect.any(String));
    expect(second).toBeNull();
  });
});

describe("jobs at build", () => {
  it("refuses SQLite with a coded error", () => {
    const app = new App({ db: sqliteMemory() }).jobs();
    expect(() => app.build()).toThrow(expect.objectContaining({ code: "JOBS_SQLITE" }));
  });

  it("refuses a duplicate name, a bad cron and a bad time zone at the call", () => {
    const app = new App({ db: sqliteMemory() }).job("a", {}, () => undefined);
    expect(() => app.job("a", {}, () => undefined)).toThrow(expect.objectContaining({ code: "JOBS_DUPLICATE" }));
    expect(() => app.cron("c", "every minute", () => undefined)).toThrow(expect.objectContaining({ code: "JOBS_BAD_OPTION" }));
    expect(() => app.cron("c", "* * * * *", () => undefined, { tz: "Mars/Olympus" })).toThrow(expect.objectContaining({ code: "JOBS_BAD_OPTION" }));
    expect(() => app.job("b", { retry: -1 }, () => undefined)).toThrow(expect.objectContaining({ code: "JOBS_BAD_OPTION" }));
  });

  it("refuses a dead letter that names no job", async () => {
    const { embedded } = await import("../../kernel/embedded/index.js");
    const app = new App({ db: embedded({ dataDir: "memory://" }) }).job("a", { deadLetter: "nowhere" }, () => undefined);
    const built = app.build();
    await expect(built.sealed.ready()).rejects.toThrow(/deadLetter "nowhere" is not a defined job/);
    await built.close();
  });
});
