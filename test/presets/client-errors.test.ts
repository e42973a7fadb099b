import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { App, RpcError as ServerRpcError, type InferRouter } from "../../presets/trellis.js";
import { createClient, isRpcError, RpcError } from "../../presets/client.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { schema } from "../../kernel/schema/index.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1")
  .table("tag", (t) => ({ id: t.serial().primaryKey(), label: t.text().unique() }))
  .table("item", (t) => ({
    id: t.serial().primaryKey(),
    name: t.text(),
    big: t.bigint(),
    price: t.decimal().nullable(),
    at: t.timestamp(),
    day: t.date().nullable(),
    meta: t.jsonb().nullable(),
    blob: t.bytes().nullable(),
    tagId: t.integer().nullable(),
  }))
  .relation("item", (rel) => ({ tag: rel.belongsTo("tag", { from: "tagId", to: "id" }) }))
  .relation("tag", (rel) => ({ items: rel.hasMany("item", { from: "id", to: "tagId" }) }))
  .build();

const createApp = () => new App({ db: sqliteMemory() }).schema(v1).resource("tag", { includable: ["items"] }).resource("item", { includable: ["tag"] });

describe("trellis/client over HTTP: rows as typed, errors by code", () => {
  let server: RunningServer;
  let client: ReturnType<typeof createClient<InferRouter<ReturnType<typeof createApp>>>>;
  beforeAll(async () => {
    server = await serve(await createApp().start(), { port: 0, hostname: "127.0.0.1", handleSignals: false });
    client = createClient<InferRouter<ReturnType<typeof createApp>>>({ url: server.url });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("brings every column type as its type says, and included relations by kind", async () => {
    const tag = await client.tag.create({ label: "a" });
    const at = new Date("2024-05-06T07:08:09.010Z");
    await client.item.create({ name: "x", big: 9007199254740993n, price: 1.5, at, day: "2024-05-06", meta: { k: [1] }, blob: new Uint8Array([1, 2]), tagId: tag.id });
    const [item] = await client.item.list({ include: { tag: true } });
    expect(item).toEqual({
      id: 1,
      name: "x",
      big: "9007199254740993",
      price: "1.5",
      at,
      day: new Date("2024-05-06T00:00:00.000Z"),
      meta: { k: [1] },
      blob: new Uint8Array([1, 2]),
      tagId: tag.id,
      tag: { id: tag.id, label: "a" },
    });
    const withItems = await client.tag.get({ where: { id: tag.id }, include: { items: true } });
    expect(withItems.items.map((row) => row.name)).toEqual(["x"]);
    expect(await client.tag.get({ where: { id: tag.id } })).not.toHaveProperty("items");
  });

  it("isRpcError narrows by code, the class being the server's own", async () => {
    const missing = await client.tag.get({ where: { id: 999 } }).catch((error: unknown) => error);
    expect(isRpcError(missing)).toBe(true);
    expect(isRpcError(missing, "NOT_FOUND")).toBe(true);
    expect(isRpcError(missing, "CONFLICT")).toBe(false);
    expect(missing).toMatchObject({ code: "NOT_FOUND", status: 404 });
    const duplicate = await client.tag.create({ label: "dup" }).then(() => client.tag.create({ label: "dup" })).catch((error: unknown) => error);
    expect(isRpcError(duplicate, "CONFLICT") && duplicate.status).toBe(409);
    expect(isRpcError(new Error("plain"))).toBe(false);
    expect(isRpcError(undefined, "NOT_FOUND")).toBe(false);
    expect(RpcError).toBe(ServerRpcError);
  });

  it("narrows the in-process client's errors the same way", async () => {
    const app = await createApp().start();
    try {
      const error = await app.client().item.get({ where: { id: 1 } }).catch((e: unknown) => e);
      expect(isRpcError(error, "NOT_FOUND")).toBe(true);
      const bad = await app.client().item.list({ where: { name: { contains: 1 as unknown as string } } }).catch((e: unknown) => e);
      expect(isRpcError(bad, "BAD_REQUEST")).toBe(true);
    } finally {
      await app.close();
    }
  });
});
