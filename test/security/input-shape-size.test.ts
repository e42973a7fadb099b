// Input shape and size: what a hostile body, path or query can make the server do.
import Database from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteDialect } from "../../kernel/db/dialect/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { rpc } from "../support/app.js";

const v1 = schema("1")
  .table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text(), qty: t.integer().default(0), meta: t.jsonb().nullable() }))
  .build();

function createApp(errors: unknown[]) {
  const database = new Database(":memory:") as unknown as SqliteDatabase;
  return new App({ db: { dialect: sqliteDialect({ database }), kind: "sqlite" }, onError: (error) => errors.push(error) })
    .schema(v1)
    .resource("item", { listLimit: { default: 10, max: 20, maxSkip: 100 } });
}

/** `{ a: { a: ... } }` nested `depth` levels. */
function nested(depth: number, leaf: unknown, key = "a"): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { [key]: value };
  return value;
}

describe("input shape and size (hostile inputs; these rules already hold)", () => {
  const errors: unknown[] = [];
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  beforeAll(async () => {
    app = await createApp(errors).start();
    await app.db.insertInto("item").values([{ name: "100%_off" }, { name: "plain" }]).execute();
  });
  afterAll(async () => {
    await app?.close();
    // None of the inputs below is an unexpected failure.
    expect(errors).toEqual([]);
  });

  const expect400 = async (name: string, input: unknown, path?: RegExp) => {
    const result = await rpc(app, name, input);
    expect(result.status).toBe(400);
    expect(result.body.code).toBe("BAD_REQUEST");
    if (path) expect(result.body.message).toMatch(path);
  };

  it("bounds where: nesting depth, list length, unknown and prototype keys are 400", async () => {
    await expect400("item.list", { where: nested(40, { name: "x" }, "AND") });
    await expect400("item.list", { where: { id: { in: Array.from({ length: 5001 }, (_, i) => i) } } }, /at most 5000/);
    await expect400("item.list", { where: { password: "x" } }, /unknown column/);
    await expect400("item.list", { where: JSON.parse('{"__proto__":{"id":1}}') }, /unknown column "__proto__"/);
    await expect400("item.list", { where: { constructor: 1 } }, /unknown column "constructor"/);
    await expect400("item.list", { where: { name: { regex: ".*" } } }, /unknown operator/);
  });

  it("treats LIKE wildcards in text operators as literal characters", async () => {
    const found = await rpc(app, "item.list", { where: { name: { contains: "%_" } } });
    expect(found.body.map((item: { name: string }) => item.name)).toEqual(["100%_off"]);
  });

  it("bounds paging and ordering", async () => {
    await expect400("item.list", { take: 21 }, /take must be at most 20/);
    await expect400("item.list", { skip: 101 }, /skip must be at most 100/);
    await expect400("item.list", { take: -1 });
    await expect400("item.list", { take: "5" });
    await expect400("item.list", { orderBy: [{ "name; drop table item": "asc" }] });
  });

  it("bounds values: 32-bit integers, NUL in text, jsonb depth", async () => {
    await expect400("item.create", { name: "big", qty: 2 ** 31 });
    await expect400("item.create", { name: "nul\u0000byte" });
    await expect400("item.create", { name: "deep", meta: nested(100, 1) }, /nested more than/);
  });

  it("answers malformed bodies and unknown procedures with 4xx, never reaching a prototype", async () => {
    const post = (path: string, body: string) =>
      app.handle(new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": "application/json" }, body }));
    expect((await post("/rpc/item/list", "{not json")).status).toBe(400);
    expect((await post("/rpc/__proto__/toString", "{}")).status).toBe(404);
    expect((await post("/rpc/constructor", "{}")).status).toBe(404);
    expect((await post("/rpc/item%2Fcreate", '{"json":{"name":"x"}}')).status).toBe(404);
    expect((await post("/rpc/item/create%00", '{"json":{"name":"x"}}')).status).toBe(404);
  });

  describe("body size over a real port", () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false });
    });
    afterAll(() => server?.close());

    it("refuses a body over the limit with 413, declared or streamed", async () => {
      const big = JSON.stringify({ json: { name: "x".repeat(1024 * 1024) } });
      const declared = await fetch(`${server.url}/rpc/item/create`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
      expect(declared.status).toBe(413);
      const chunks = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
          controller.close();
        },
      });
      const streamed = await fetch(`${server.url}/rpc/item/create`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: chunks,
        duplex: "half",
      } as RequestInit);
      expect(streamed.status).toBe(413);
    });
  });
});
