import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValueError, decodeRow, encodeValue } from "../../kernel/db/values.js";
import { schema } from "../../kernel/schema/index.js";
import type { ColumnModel } from "../../kernel/schema/model.js";
import { families } from "../support/databases.js";
import { openHarness, type Harness } from "./harness.js";

const model = schema("1")
  .table("holder", (t) => ({ id: t.serial().primaryKey() }))
  .table("kitchen", (t) => ({
    id: t.serial().primaryKey(),
    holderId: t.integer().references("holder", "id"),
    text: t.text().nullable(),
    varchar: t.varchar().nullable(),
    integer: t.integer().nullable(),
    boolean: t.boolean().nullable(),
    timestamp: t.timestamp().nullable(),
    bigint: t.bigint().nullable(),
    decimal: t.decimal().nullable(),
    real: t.real().nullable(),
    date: t.date().nullable(),
    jsonb: t.jsonb().nullable(),
    uuid: t.uuid().nullable(),
    bytes: t.bytes().nullable(),
  }))
  // Wider than json_build_array's 100 arguments, to exercise the chunked JSON tuples on Postgres.
  .table("wide", (t) => ({
    id: t.serial().primaryKey(),
    holderId: t.integer().references("holder", "id"),
    ...Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`c${i}`, t.integer().nullable()])),
  }))
  .relation("holder", (rel) => ({
    items: rel.hasMany("kitchen", { from: "id", to: "holderId" }),
    wide: rel.hasOne("wide", { from: "id", to: "holderId" }),
  }))
  .relation("kitchen", (rel) => ({ holder: rel.belongsTo("holder", { from: "holderId", to: "id" }) }))
  .build();
const columns = model.tables.kitchen!.columns;

type Sample = Record<string, unknown>;
// What goes in (any accepted input form) and what must come out (the SPEC select type).
const samples: { input: Sample; output: Sample }[] = [
  {
    input: {
      text: `it's "quoted" ünïcode ✓`,
      varchar: "v",
      integer: -2147483648,
      boolean: true,
      timestamp: new Date("2024-01-02T03:04:05.678Z"),
      bigint: "9223372036854775807",
      decimal: "12345678901234567890.123456789",
      real: 0.1,
      date: new Date("2024-02-29T00:00:00.000Z"),
      jsonb: { a: [1, "x", null, true], nested: { n: 1.5 } },
      uuid: "6f1c1a2e-1111-4222-8333-444455556666",
      bytes: new Uint8Array([0, 1, 127, 128, 255]),
    },
    output: {
      text: `it's "quoted" ünïcode ✓`,
      varchar: "v",
      integer: -2147483648,
      boolean: true,
      timestamp: new Date("2024-01-02T03:04:05.678Z"),
      bigint: "9223372036854775807",
      decimal: "12345678901234567890.123456789",
      real: 0.1,
      date: new Date("2024-02-29T00:00:00.000Z"),
      jsonb: { a: [1, "x", null, true], nested: { n: 1.5 } },
      uuid: "6f1c1a2e-1111-4222-8333-444455556666",
      bytes: new Uint8Array([0, 1, 127, 128, 255]),
    },
  },
  {
    // The other accepted input forms: ISO strings with an offset, YYYY-MM-DD, numbers for exact types.
    input: {
      boolean: false,
      timestamp: "2024-06-30T23:30:00.5+02:00",
      bigint: "-9223372036854775808",
      decimal: 2.5,
      real: -1e300,
      date: "1999-12-31",
      jsonb: "just a string",
      bytes: new Uint8Array([]),
      integer: 0,
      text: "",
    },
    output: {
      boolean: false,
      timestamp: new Date("2024-06-30T21:30:00.500Z"),
      bigint: "-9223372036854775808",
      decimal: "2.5",
      real: -1e300,
      date: new Date("1999-12-31T00:00:00.000Z"),
      jsonb: "just a string",
      bytes: new Uint8Array([]),
      integer: 0,
      text: "",
    },
  },
  { input: { jsonb: [1, [2, { three: 3 }]] }, output: { jsonb: [1, [2, { three: 3 }]] } },
  { input: { jsonb: 42 }, output: { jsonb: 42 } },
];
const NULLS = Object.fromEntries(Object.keys(columns).filter((c) => c !== "id" && c !== "holderId").map((c) => [c, null]));

describe.each(families())("values on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family, [model]);
    await h.db.insertInto("holder").values({ id: 1 }).execute();
    for (const { input } of samples) {
      const row = { holderId: 1, ...Object.fromEntries(Object.entries(input).map(([k, v]) => [k, encodeValue(h.kind, columns[k]!, v)])) };
      await h.db.insertInto("kitchen").values(row).execute();
    }
    await h.db.insertInto("kitchen").values({ holderId: 1 }).execute();
  });
  afterAll(() => h?.close());

  const expected = (i: number) => ({ id: i + 1, holderId: 1, ...NULLS, ...(samples[i]?.output ?? {}) });

  it("round-trips every column type through findMany with its select type", async () => {
    const rows = await h.db.query.kitchen.findMany();
    rows.forEach((row, i) => expect(row).toStrictEqual(expected(i)));
    const [first] = rows;
    expect(first!.bytes!.constructor).toBe(Uint8Array);
    expect(typeof first!.bigint).toBe("string");
    expect(typeof first!.decimal).toBe("string");
  });

  it("decodes included rows to the same values", async () => {
    const [holder] = await h.db.query.holder.findMany({ include: { items: true } });
    (holder!.items as Sample[]).forEach((row, i) => expect(row).toStrictEqual(expected(i)));
    const viaBelongsTo = await h.db.query.kitchen.findMany({ include: { holder: true } });
    expect(viaBelongsTo[0]!.holder).toStrictEqual({ id: 1 });
  });

  it("reads tables wider than a JSON tuple chunk", async () => {
    const values = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`c${i}`, i * 3]));
    await h.db.insertInto("wide").values({ holderId: 1, ...values }).execute();
    const expectedRow = { id: 1, holderId: 1, ...values };
    expect(await h.db.query.wide.findFirst()).toStrictEqual(expectedRow);
    const [holder] = await h.db.query.holder.findMany({ include: { wide: true, items: true } });
    expect(holder!.wide).toStrictEqual(expectedRow);
    expect(holder!.items).toHaveLength(samples.length + 1);
  });

  it("decodes rows read with plain Kysely through decodeRow", async () => {
    // Plain selects go through the driver's own parsing (SQLite returns 64-bit integers as numbers,
    // so this checks a value in the safe range; the query API casts to keep all 64 bits).
    await h.db.insertInto("kitchen").values({ holderId: 1, bigint: encodeValue(h.kind, columns.bigint!, "42") }).execute();
    const raw = await h.db.selectFrom("kitchen").selectAll().orderBy("id").execute();
    const decoded = raw.map((row) => decodeRow(h.kind, model.tables.kitchen!, row));
    const lossy = (row: Sample) => (h.kind === "sqlite" ? { ...row, bigint: "(beyond 2^53)" } : row);
    decoded.slice(0, samples.length + 1).forEach((row, i) => expect(lossy(row)).toStrictEqual(lossy(expected(i))));
    expect(decoded.at(-1)!.bigint).toBe("42");
    await h.db.deleteFrom("kitchen").where("bigint", "=", encodeValue(h.kind, columns.bigint!, "42") as never).execute();
  });
});

describe("encodeValue", () => {
  const col = (type: ColumnModel["type"]): ColumnModel => ({ type, nullable: true, primaryKey: false, unique: false, index: false });

  it("gives each family what its driver binds", () => {
    const at = new Date("2024-01-02T03:04:05.678Z");
    expect(encodeValue("postgres", col("timestamp"), at)).toBe(at);
    expect(encodeValue("sqlite", col("timestamp"), "2024-01-02T04:04:05.678+01:00")).toBe("2024-01-02T03:04:05.678Z");
    expect(encodeValue("postgres", col("date"), new Date("2024-03-01T00:00:00Z"))).toBe("2024-03-01");
    expect(encodeValue("sqlite", col("boolean"), true)).toBe(1);
    expect(encodeValue("postgres", col("boolean"), false)).toBe(false);
    expect(encodeValue("postgres", col("jsonb"), ["a"])).toBe('["a"]');
    expect(encodeValue("sqlite", col("bigint"), "9223372036854775807")).toBe(9223372036854775807n);
    expect(encodeValue("postgres", col("bigint"), 12n)).toBe("12");
    expect(Buffer.isBuffer(encodeValue("sqlite", col("bytes"), new Uint8Array([1])))).toBe(true);
    expect(encodeValue("sqlite", col("text"), null)).toBeNull();
    expect(encodeValue("sqlite", col("text"), undefined)).toBeNull();
  });

  const wrong: [ColumnModel["type"], unknown][] = [
    ["integer", 1.5],
    ["integer", "1"],
    ["serial", Number.MAX_SAFE_INTEGER + 2],
    ["real", Number.NaN],
    ["text", 1],
    ["uuid", {}],
    ["boolean", "true"],
    ["bigint", "9223372036854775808"],
    ["bigint", "1.5"],
    ["decimal", "1,5"],
    ["decimal", "NaN"],
    ["timestamp", "yesterday"],
    ["timestamp", "1"],
    ["timestamp", new Date(Number.NaN)],
    ["date", "2023-02-29"],
    ["date", 20240101],
    ["jsonb", () => 1],
    ["jsonb", { big: 1n }],
    ["bytes", [1, 2]],
  ];
  it.each(wrong)("refuses a %s column given %s", (type, value) => {
    expect(() => encodeValue("postgres", col(type), value)).toThrow(ValueError);
    expect(() => encodeValue("sqlite", col(type), value)).toThrow(ValueError);
  });
});
