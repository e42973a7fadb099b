import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { jobFamilies, openJobsDatabase, sleep, waitFor } from "./support.js";

const SECRET = `whsec_${Buffer.from("a-webhook-secret-of-32-bytes!!!!").toString("base64")}`;
const v1 = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .table("job", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .build();

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real receiver on a loopback port; it answers `statuses` in turn, then 204. */
async function receiver(statuses: number[]): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.statusCode = statuses.shift() ?? 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** A receiver that answers 200 with a body of `total` bytes, counting what it managed to write before the caller hung up. */
async function flood(total: number): Promise<{ server: Server; url: string; written: { bytes: number; closedEarly: boolean | undefined } }> {
  const written = { bytes: 0, closedEarly: undefined as boolean | undefined };
  const chunk = Buffer.alloc(64 * 1024, 120);
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      const pump = () => {
        while (written.bytes < total) {
          written.bytes += chunk.length;
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
        response.end();
      };
      response.on("close", () => (written.closedEarly = !response.writableFinished));
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, written };
}

/** A loopback url nothing listens on. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hooks`;
}

describe.each(jobFamilies())("webhooks on %s", (family) => {
  let database: Awaited<ReturnType<typeof openJobsDatabase>>;
  let built: any;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let other: Awaited<ReturnType<typeof receiver>>;
  let huge: Awaited<ReturnType<typeof flood>>;
  let refused: string;

  beforeAll(async () => {
    database = await openJobsDatabase(family);
    hook = await receiver([500]);
    other = await receiver([]);
    huge = await flood(64 * 1024 * 1024);
    refused = await refusingUrl();
    const app = new App({ db: { dialect: database.dialect, kind: database.kind }, onError: () => undefined })
      .schema(v1)
      .jobs({ schema: database.jobsSchema, pollingInterval: 0.5 })
      .webhooks({
        endpoints: [
          { url: hook.url, secret: SECRET, tables: ["post", "job"] },
          { url: other.url, secret: SECRET, tables: ["post"], events: ["delete"] },
          { url: huge.url, secret: SECRET, tables: ["note"] },
          { url: refused, secret: SECRET, tables: ["note"] },
        ],
        backoff: false,
      })
      .resource("post")
      .resource("note");
    built = app.build();
    await built.migrator.migrateToLatest();
  }, 60_000);

  afterAll(async () => {
    await built?.close();
    await database?.close();
    hook?.server.close();
    other?.server.close();
    huge?.server.close();
  });

  it("delivers a committed change signed per Standard Webhooks, retried after a 500, with its attempts visible", async () => {
    const created = await rpc(built, "post.create", { title: "hello" });
    expect(created.status).toBe(200);
    await waitFor("two attempts at the receiver", () => hook.received.length === 2);
    const [first, second] = hook.received;
    // The same message id on every attempt, so a receiver can drop duplicates.
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    const payload = new Webhook(SECRET).verify(second!.body, second!.headers as Record<string, string>);
    expect(payload).toEqual({ type: "post.insert", timestamp: expect.any(String), data: { table: "post", op: "insert", keys: [created.body.id] } });
    expect(() => new Webhook(`whsec_${Buffer.from("another-secret-of-32-bytes!!!!!!").toString("base64")}`).verify(second!.body, second!.headers as Record<string, string>)).toThrow();
    const jobs = built.sealed.service("jobs");
    await waitFor("the delivery completed", async () => (await jobs.list({ queue: "webhooks.deliver" }))[0]?.state === "completed");
    const [delivery] = await jobs.list({ queue: "webhooks.deliver" });
    expect(delivery).toMatchObject({ state: "completed", attempts: 2, output: { status: 204 } });
    // The endpoint that only takes deletes heard nothing.
    expect(other.received).toEqual([]);
  });

  it("a rolled-back write delivers nothing; unsubscribed tables and events deliver nothing", async () => {
    const before = hook.received.length;
    await expect(built.db.transact(async (trx: any) => {
      await trx.insertInto("post").values({ title: "never" }).execute();
      throw new Error("roll back");
    })).rejects.toThrow("roll back");
    await rpc(built, "note.create", { body: "not subscribed" });
    await sleep(1200);
    expect(hook.received.length).toBe(before);
  });

  it("a table named like the engine's own (job) hears the app's writes only, never the engine's", async () => {
    const before = hook.received.length;
    await built.db.insertInto("job").values({ title: "mine" }).execute();
    await waitFor("the job-table delivery", () => hook.received.length === before + 1);
    await sleep(1200);
    expect(hook.received.length).toBe(before + 1);
    expect(JSON.parse(hook.received.at(-1)!.body).type).toBe("job.insert");
  });

  it("reads a small bound of a huge answer and hangs up; a refused connection fails naming ECONNREFUSED", async () => {
    const created = await rpc(built, "note.create", { body: "to the flood and the closed port" });
    const jobs = built.sealed.service("jobs");
    const note = created.body.id;
    const to = async (url: string) => (await jobs.list({ queue: "webhooks.deliver" })).find((job: any) => job.data?.url === url && job.data.payload.data.keys?.[0] === note);
    await waitFor("the delivery to the huge answer completed", async () => (await to(huge.url))?.state === "completed");
    expect((await to(huge.url)).output).toEqual({ status: 200 });
    await waitFor("the receiver saw the hang-up", () => huge.written.closedEarly !== undefined);
    // 64 MB offered; the rest was never read (what is left is the sockets' buffers).
    expect(huge.written.closedEarly).toBe(true);
    expect(huge.written.bytes).toBeLessThan(16 * 1024 * 1024);
    // Read while it waits for its retry: once it runs again its last error is not shown.
    let error: string | null = null;
    await waitFor("the refused delivery failed once", async () => Boolean((error = (await to(refused))?.error ?? null)));
    expect(error).toMatch(/^webhook .*: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  });

  it("a delete reaches both endpoints", async () => {
    const beforeOther = other.received.length;
    const created = await rpc(built, "post.create", { title: "to delete" });
    await rpc(built, "post.delete", { where: { id: created.body.id } });
    await waitFor("the delete at the second endpoint", () => other.received.length === beforeOther + 1);
    expect(JSON.parse(other.received.at(-1)!.body)).toMatchObject({ type: "post.delete", data: { keys: [created.body.id] } });
  });
});

describe("webhooks at build", () => {
  it("refuses an unknown table, a bad url and a short secret with coded errors", async () => {
    const { embedded } = await import("../../kernel/embedded/index.js");
    const db = embedded({ dataDir: "memory://" });
    const unknown = new App({ db }).schema(v1).webhooks({ endpoints: [{ url: "http://127.0.0.1:1/x", secret: SECRET, tables: ["nope"] }] });
    expect(() => unknown.build()).toThrow(expect.objectContaining({ code: "WEBHOOKS_UNKNOWN_TABLE" }));
    expect(() => new App({ db }).webhooks({ endpoints: [{ url: "ftp://x", secret: SECRET, tables: ["post"] }] })).toThrow(expect.objectContaining({ code: "WEBHOOKS_BAD_ENDPOINT" }));
    expect(() => new App({ db }).webhooks({ endpoints: [{ url: "http://x", secret: "c2hvcnQ=", tables: ["post"] }] })).toThrow(expect.objectContaining({ code: "WEBHOOKS_BAD_ENDPOINT" }));
    await db.close?.();
  });
});
