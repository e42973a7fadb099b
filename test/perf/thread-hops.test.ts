/**
 * Round trips to the embedded database thread, counted per resource action: at one connection
 * nothing overlaps, so every message is paid in full (two thread wake-ups and a copy each way;
 * docs/performance.md, "The embedded database thread"). A change that splits a statement into a
 * prepare and an execute, wraps one in BEGIN/COMMIT, or adds a statement fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { databaseThread } from "../../kernel/embedded/worker/host.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";

const v1 = schema("1").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.text().nullable() })).build();

describe("messages to the embedded database thread per resource action", () => {
  const ops: string[] = [];
  let built: any;

  beforeAll(async () => {
    built = new App({ db: embedded({ dataDir: "memory://", thread: "worker" }), onError: () => {} }).schema(v1).resource("post").build();
    await built.migrator.migrateToLatest();
    // The process's one database thread: every request to it, whatever the database, passes here.
    const { thread } = databaseThread();
    const call = thread.call.bind(thread);
    thread.call = ((request: { op: string }, transfer?: ArrayBuffer[]) => (ops.push(request.op), call(request as never, transfer))) as typeof thread.call;
  }, 120_000);
  afterAll(async () => {
    await built.close();
  });

  const messagesOf = async (name: string, input: unknown) => {
    ops.length = 0;
    const result = await rpc(built, name, input);
    expect(result.status).toBe(200);
    return [...ops];
  };

  it("create, get, update, list and delete are one message each: the statement, prepared on the thread", async () => {
    // The first run of each statement text prepares it there too: still one message.
    for (let round = 0; round < 2; round++) {
      expect(await messagesOf("post.create", { title: "a" })).toEqual(["query"]);
      expect(await messagesOf("post.get", { where: { id: 1 } })).toEqual(["query"]);
      expect(await messagesOf("post.update", { where: { id: 1 }, data: { title: "b" } })).toEqual(["query"]);
      expect(await messagesOf("post.list", { take: 20 })).toEqual(["query"]);
    }
    expect(await messagesOf("post.delete", { where: { id: 1 } })).toEqual(["query"]);
  });

  it("/health sends one statement", async () => {
    ops.length = 0;
    expect((await built.handle(new Request("http://localhost/health"))).status).toBe(200);
    expect(ops).toEqual(["query"]);
  });
});
