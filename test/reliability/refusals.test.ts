import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

/**
 * A statement the database refuses is not a lost connection, and a client that hangs up is not a
 * failure: neither is the 503 "database connection lost", and a hang-up never reaches `onError`.
 */
const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();

function appWith(db: ConstructorParameters<typeof App>[0]["db"], reported: unknown[]) {
  return new App({ db, onError: (error) => reported.push(error) })
    .schema(v1)
    .resource("item")
    // 70,000 bound parameters: over the protocol's 65,535, so the database refuses the statement.
    .procedure("tooMany", (base) =>
      base.handler(({ context }) => context.db.selectFrom("item").selectAll().where("id", "in", Array.from({ length: 70_000 }, (_, index) => index)).execute()),
    )
    .procedure("echo", (base) => base.input(z.object({ text: z.string() })).handler(({ input }) => input.text.length));
}

describe.each(families())("a statement the database refuses, on %s", (family) => {
  const reported: unknown[] = [];
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof appWith>["start"]>>;
  beforeAll(async () => {
    database = await openDatabase(family);
    app = await appWith({ kind: database.kind, dialect: database.dialect }, reported).start();
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it("is a reported 500, never 503 connection lost, and the app keeps serving", async () => {
    const answer = await rpc(app, "tooMany");
    expect(answer.status === 400 || answer.status === 500, JSON.stringify(answer.body)).toBe(true);
    expect(JSON.stringify(answer.body)).not.toMatch(/connection/i);
    if (answer.status === 500) expect(reported).toHaveLength(1);
    expect(await rpc(app, "item.create", { name: "still here" })).toMatchObject({ status: 200 });
  });
});

const withFiles = schema("1")
  .auth()
  .table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .files()
  .build();

/** Sends `head` and the start of a chunked body, then resets the connection mid-body. */
function hangUp(port: number, head: string, partial: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`${head}Transfer-Encoding: chunked\r\n\r\n1000\r\n${partial}`);
      // Hang up with the body unfinished, once the server has started reading it.
      setTimeout(() => {
        socket.resetAndDestroy();
        resolve();
      }, 100);
    });
    socket.on("error", reject);
  });
}

describe("a client that hangs up mid-body, through serve()", () => {
  const reported: unknown[] = [];
  let server: RunningServer;
  beforeAll(async () => {
    const app = new App({ baseUrl: "http://localhost:3000", db: sqliteMemory(), storage: memoryStorage(), onError: (error) => reported.push(error) })
      .schema(withFiles)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .files({ permissions: { upload: "public", list: "public", get: "public", delete: "public" } })
      .procedure("echo", (base) => base.input(z.object({ text: z.string() })).handler(({ input }) => input.text.length));
    server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  }, 60_000);
  afterAll(() => server?.close());

  it("is not an error: nothing reaches onError, and the next request is served", async () => {
    const port = Number(new URL(server.url).port);
    const boundary = "----trellis";
    for (let round = 0; round < 2; round++) {
      await hangUp(port, "POST /rpc/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n", `{"json":{"text":"${"a".repeat(4000)}`);
      // An upload cut off in the middle of its file part.
      await hangUp(
        port,
        `POST /rpc/file/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"json":{"file":{}},"maps":[["file"]]}\r\n--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${"x".repeat(3000)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reported).toEqual([]);
    const next = await fetch(`${server.url}/rpc/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { text: "abc" } }) });
    expect(await next.json()).toEqual({ json: 3 });
  }, 30_000);
});
