import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { createFixtureApp } from "./fixture.js";

describe.each(families())("kitchen resource on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createFixtureApp>["start"]>>;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createFixtureApp(db).start();
    const rows = [
      { label: "apple", code: "A-1", qty: 1, price: "1.50", flag: true, tags: "a,b" },
      { label: "banana 50%", code: "B_2", qty: 5, price: "20.00", flag: false, tags: ["c"] },
      { label: "cherry", code: "C-3", qty: 10, price: "3.25", flag: null },
      { label: null, code: null, qty: null },
    ];
    for (const row of rows) {
      const created = await rpc(app, "kitchen.create", row);
      expect(created.status).toBe(200);
      ids[row.label ?? "null"] = created.body.id;
    }
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const labels = async (where: unknown) => {
    const result = await rpc(app, "kitchen.list", { where, orderBy: [{ id: "asc" }] });
    expect(result.status).toBe(200);
    return result.body.map((row: { label: string | null }) => row.label);
  };

  it("supports equality, null and every comparison operator", async () => {
    expect(await labels({ label: "apple" })).toEqual(["apple"]);
    expect(await labels({ label: null })).toEqual([null]);
    expect(await labels({ qty: { equals: 5 } })).toEqual(["banana 50%"]);
    expect(await labels({ qty: { not: 5 } })).toEqual(["apple", "cherry"]);
    expect(await labels({ qty: { in: [1, 10] } })).toEqual(["apple", "cherry"]);
    expect(await labels({ qty: { notIn: [1] } })).toEqual(["banana 50%", "cherry"]);
    expect(await labels({ qty: { lt: 5 } })).toEqual(["apple"]);
    expect(await labels({ qty: { lte: 5 } })).toEqual(["apple", "banana 50%"]);
    expect(await labels({ qty: { gt: 5 } })).toEqual(["cherry"]);
    expect(await labels({ qty: { gte: 5 } })).toEqual(["banana 50%", "cherry"]);
    expect(await labels({ price: { gt: "3" } })).toEqual(["banana 50%", "cherry"]);
    expect(await labels({ flag: { isNull: true } })).toEqual(["cherry", null]);
  });

  it("supports text operators with LIKE wildcards escaped", async () => {
    expect(await labels({ label: { contains: "an" } })).toEqual(["banana 50%"]);
    expect(await labels({ label: { startsWith: "ch" } })).toEqual(["cherry"]);
    expect(await labels({ label: { endsWith: "le" } })).toEqual(["apple"]);
    expect(await labels({ label: { contains: "50%" } })).toEqual(["banana 50%"]);
    expect(await labels({ label: { contains: "%" } })).toEqual(["banana 50%"]);
    expect(await labels({ code: { contains: "_" } })).toEqual(["banana 50%"]);
    expect(await labels({ label: { contains: "' OR 1=1 --" } })).toEqual([]);
  });

  it("supports AND, OR, NOT and their empty edge cases", async () => {
    expect(await labels({ OR: [{ label: "apple" }, { qty: 10 }] })).toEqual(["apple", "cherry"]);
    expect(await labels({ AND: [{ qty: { gte: 1 } }, { qty: { lte: 5 } }] })).toEqual(["apple", "banana 50%"]);
    expect(await labels({ NOT: { label: "apple" }, qty: { isNull: false } })).toEqual(["banana 50%", "cherry"]);
    expect(await labels({ OR: [] })).toEqual([]);
    expect((await labels({ AND: [] })).length).toBe(4);
    expect(await labels({ qty: { in: [] } })).toEqual([]);
    expect((await labels({ qty: { notIn: [] } })).length).toBe(4);
  });

  it("refuses text operators on non-text columns and unknown operators with 400", async () => {
    expect((await rpc(app, "kitchen.list", { where: { qty: { contains: "1" } } })).status).toBe(400);
    expect((await rpc(app, "kitchen.list", { where: { qty: { like: "1" } } })).status).toBe(400);
    expect((await rpc(app, "kitchen.list", { where: { qty: { lt: "abc" } } })).status).toBe(400);
  });

  it("round-trips every column type over JSON", async () => {
    const input = {
      label: "all",
      code: "Z",
      qty: 7,
      big: "9007199254740993",
      price: "12345678901234.5678",
      ratio: 0.25,
      flag: true,
      at: "2024-05-06T07:08:09.123Z",
      day: "2024-05-06",
      meta: { nested: [1, "two", null] },
      ref: "3f1c2a4e-8b7d-4c6e-9a1b-2c3d4e5f6a7b",
      blob: Buffer.from([0, 1, 2, 255]).toString("base64"),
      tags: ["b", "a"],
    };
    const created = await rpc(app, "kitchen.create", input);
    expect(created.status).toBe(200);
    expect(created.body.big).toBe("9007199254740993");
    const updated = await rpc(app, "kitchen.update", { where: { id: created.body.id }, data: { code: "Y" } });
    expect(updated.body).toMatchObject({ big: "9007199254740993", price: "12345678901234.5678" });
    const listed = await rpc(app, "kitchen.list", { where: { id: created.body.id } });
    expect(listed.body[0].big).toBe("9007199254740993");
    const got = await rpc(app, "kitchen.get", { where: { id: created.body.id } });
    expect(got.body).toMatchObject({
      label: "all",
      qty: 7,
      big: "9007199254740993",
      price: "12345678901234.5678",
      ratio: 0.25,
      flag: true,
      meta: { nested: [1, "two", null] },
      ref: "3f1c2a4e-8b7d-4c6e-9a1b-2c3d4e5f6a7b",
      tags: "b,a",
    });
    expect(new Date(got.body.at).toISOString()).toBe("2024-05-06T07:08:09.123Z");
    expect(new Date(got.body.day).toISOString()).toBe("2024-05-06T00:00:00.000Z");
  });

  it("round-trips Date and Uint8Array through the in-process client", async () => {
    const client = app.client();
    const at = new Date("2023-01-02T03:04:05.006Z");
    const created = await client.kitchen.create({ label: "typed", at, blob: new Uint8Array([9, 8, 7]), big: "42" });
    expect(created.at).toBeInstanceOf(Date);
    expect((created.at as Date).toISOString()).toBe(at.toISOString());
    expect(created.blob).toBeInstanceOf(Uint8Array);
    expect([...(created.blob as Uint8Array)]).toEqual([9, 8, 7]);
    expect(created.big).toBe("42");
  });
});
