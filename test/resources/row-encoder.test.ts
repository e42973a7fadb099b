/**
 * Resource rows on the RPC wire are encoded by a serializer compiled from the table: its output must
 * be byte for byte oRPC's generic serializer's, and the typed client must read it back unchanged.
 */
import { StandardRPCJsonSerializer, StandardRPCSerializer } from "@orpc/client/standard";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customJsonSerializers } from "../../kernel/wire/custom-json.js";
import { compileRowEncoder, markedEncoder } from "../../kernel/wire/row-encoder.js";
import { schema } from "../../kernel/schema/index.js";
import { App, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { kitchenColumns } from "./fixture.js";

const v1 = schema("1")
  .table("kitchen", kitchenColumns)
  .table("part", (t) => ({ id: t.serial().primaryKey(), kitchenId: t.integer().references("kitchen", "id"), at: t.timestamp().nullable() }))
  .relation("kitchen", (rel) => ({ parts: rel.hasMany("part", { from: "id", to: "kitchenId" }) }))
  .build();

const json = new StandardRPCJsonSerializer({ customJsonSerializers: [...customJsonSerializers] });
const generic = new StandardRPCSerializer(json);
/** What oRPC's RPC handler would send for `value`. */
const genericText = (value: unknown) => JSON.stringify(generic.serialize(value));
/** What the compiled encoder sends for `value` (marked by one of the encoder's methods). */
function compiledText(value: unknown): string {
  const encode = markedEncoder(value);
  if (!encode) throw new Error("not marked");
  const sink = { meta: [] as [number, ...(string | number)[]][], maps: [], blobs: [], generic: json };
  const out = encode(value, sink);
  return JSON.stringify({ json: out, meta: sink.meta.length ? sink.meta : undefined });
}
const decoded = (text: string) => generic.deserialize(JSON.parse(text));

const full = {
  id: 1,
  label: "a \"quoted\" label\n",
  code: "v",
  qty: -3,
  big: "9007199254740993",
  price: "12.50",
  ratio: 0.25,
  flag: true,
  at: new Date("2026-11-25T10:11:12.345Z"),
  day: new Date("2026-11-25T00:00:00.000Z"),
  meta: { nested: [1, "two", { three: null }], deep: { ok: true } },
  ref: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  blob: new Uint8Array([0, 1, 2, 253, 254, 255]),
  tags: "a,c", // a multiple enum is stored and read as its comma-separated text
};
const empty = Object.fromEntries(Object.keys(full).map((key) => [key, key === "id" ? 2 : null]));

describe("the compiled row encoder against oRPC's generic serializer", () => {
  const encoder = compileRowEncoder(v1.tables.kitchen!);

  it("encodes every column type, set and null, exactly as the generic serializer does", () => {
    for (const row of [full, empty]) {
      const text = compiledText(encoder.one({ ...row }));
      expect(text).toBe(genericText(row));
      expect(decoded(text)).toEqual(row);
    }
    const rows = [{ ...full }, { ...empty }, { ...full, id: 3 }];
    const text = compiledText(encoder.many(rows));
    expect(text).toBe(genericText(rows));
    expect(text).toContain('"meta":[[1,0,"at"],[1,0,"day"],[40,0,"blob"],[1,2,"at"],[1,2,"day"],[40,2,"blob"]]');
    expect(decoded(text)).toEqual([full, empty, { ...full, id: 3 }]);
    const page = { items: [{ ...full }], nextCursor: "abc" };
    expect(compiledText(encoder.page(page))).toBe(genericText(page));
  });

  it("leaves what the column does not promise to the generic serializer, at its own path", () => {
    const odd = {
      ...full,
      ratio: Number.NaN, // real NaN: null plus a NaN meta entry
      qty: Number.POSITIVE_INFINITY,
      at: new Date(Number.NaN), // an invalid Date: null, still typed
      label: new Date("2020-01-01T00:00:00Z"), // middleware put a Date into a text column
      day: "2026-11-25", // and a string into a date column
      blob: null,
      meta: { when: new Date("2021-01-01T00:00:00Z"), big: 5n, gone: undefined },
      parts: [{ id: 1, at: new Date("2022-02-02T00:00:00Z") }], // an included relation
      extra: new Map([["k", new Set([1])]]),
      maybe: undefined,
    };
    const text = compiledText(encoder.one({ ...odd }));
    expect(text).toBe(genericText(odd));
    const rows = [{ ...full }, undefined, "not a row", { ...empty }];
    expect(compiledText(encoder.many(rows as object[]))).toBe(genericText(rows));
  });

  it("marks only what it was given: a replaced answer is encoded generically", () => {
    const row = encoder.one({ ...full });
    expect(markedEncoder(row)).toBeDefined();
    expect(markedEncoder({ ...row })).toBeUndefined();
    expect(markedEncoder(undefined)).toBeUndefined();
  });
});

describe("resource answers over /rpc", () => {
  let database: TestDatabase;
  let built: any;
  const app = () =>
    new App({ db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .resource("kitchen", { includable: ["parts"] })
      .resource("part");

  beforeAll(async () => {
    database = await openDatabase("pglite");
    built = app().build();
    await built.migrator.migrateToLatest();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  const body = async (name: string, input: unknown) => {
    const response = await built.handle(
      new Request(`http://localhost/rpc/${name.replace(".", "/")}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) }),
    );
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return text;
  };

  it("sends for every action the bytes oRPC's own serializer sends, and the typed client reads the same values", async () => {
    const { id: _, ...data } = full;
    const client = createClient<InferRouter<ReturnType<typeof app>>>({ url: "http://localhost", fetch: (request) => built.handle(request) });
    const row = await client.kitchen.create({ ...data, day: "2026-11-25" });
    expect(row).toEqual({ ...full, id: row.id });
    expect(row.blob).toBeInstanceOf(Uint8Array);
    await body("part.create", { kitchenId: row.id, at: new Date("2022-02-02T00:00:00Z") });
    // The same procedures called in process (no wire): their answer, encoded by oRPC, is the reference.
    const inProcess = built.client();
    // The answers are the compiled encoder's to encode.
    expect(markedEncoder(await inProcess.kitchen.list({}))).toBeDefined();
    for (const [name, input] of [
      ["kitchen.get", { where: { id: row.id } }],
      ["kitchen.get", { where: { id: row.id }, include: { parts: true } }],
      ["kitchen.list", {}],
      ["kitchen.list", { include: { parts: true } }],
      ["kitchen.page", { take: 1 }],
    ] as const) {
      const [resource, action] = name.split(".") as [string, string];
      expect(await body(name, input), name).toBe(genericText(await inProcess[resource][action](input)));
    }
    const updated = await body("kitchen.update", { where: { id: row.id }, data: { label: "changed" } });
    expect(updated).toBe(genericText(await inProcess.kitchen.get({ where: { id: row.id } })));
    const [read] = await client.kitchen.list({ include: { parts: true } });
    expect(read).toEqual({ ...full, id: row.id, label: "changed", parts: [{ id: 1, kitchenId: row.id, at: new Date("2022-02-02T00:00:00Z") }] });
    await body("part.delete", { where: { id: 1 } });
    const before = await inProcess.kitchen.get({ where: { id: row.id } });
    expect(await body("kitchen.delete", { where: { id: row.id } })).toBe(genericText(before));
  });
});
