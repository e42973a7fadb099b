import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_IN_VALUES, WhereError, compileWhere } from "../../kernel/db/where.js";
import { schema } from "../../kernel/schema/index.js";
import { families } from "../support/databases.js";
import { openHarness, type Harness } from "./harness.js";

const model = schema("1")
  .table("item", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    code: t.varchar().nullable(),
    n: t.integer().nullable(),
    price: t.decimal().nullable(),
    big: t.bigint().nullable(),
    ratio: t.real().nullable(),
    flag: t.boolean().nullable(),
    at: t.timestamp().nullable(),
    day: t.date().nullable(),
    meta: t.jsonb().nullable(),
    ref: t.uuid().nullable(),
    status: t.text().enum(["draft", "live"]).nullable(),
  }))
  .build();

const INJECTION = `x'); drop table item; --`;
// id: title, code, n, price, big, flag, at, day, ref, status
const rows = [
  { title: "50% off", code: "A-1", n: 1, price: "9", big: "9223372036854775807", flag: true, at: "2024-01-01T00:00:00.000Z", day: "2024-01-01", ref: "6f1c1a2e-1111-4222-8333-444455556666", status: "draft" },
  { title: "50 percent", code: "a-2", n: 2, price: "10", big: "-9223372036854775808", flag: false, at: "2024-06-01T12:30:00.000Z", day: "2024-06-01", ref: null, status: "live" },
  { title: "a_b", code: null, n: null, price: "10.5", big: "1", flag: null, at: null, day: null, ref: null, status: null },
  { title: "axb", code: "c", n: 4, price: null, big: null, flag: true, at: "2025-01-01T00:00:00.000Z", day: "2025-01-01", ref: null, status: "live" },
  { title: "back\\slash", code: "d", n: 5, price: "100", big: "2", flag: false, at: null, day: null, ref: null, status: "draft" },
  { title: "star*?[x]", code: "e", n: 6, price: "0.5", big: "3", flag: null, at: null, day: null, ref: null, status: null },
  { title: "Hello", code: "f", n: 7, price: null, big: null, flag: null, at: null, day: null, ref: null, status: null },
  { title: INJECTION, code: "g", n: 8, price: null, big: null, flag: null, at: null, day: null, ref: null, status: null },
];
const ALL = rows.map((_, i) => i + 1);

describe.each(families())("where on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family, [model]);
    const { encodeValue } = await import("../../kernel/db/values.js");
    const columns = model.tables.item!.columns;
    for (const row of rows) {
      const values = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, encodeValue(h.kind, columns[k]!, v)]));
      await h.db.insertInto("item").values(values).execute();
    }
  });
  afterAll(() => h?.close());

  const ids = async (where: unknown) => (await h.db.query.item.findMany({ where: where as never })).map((row) => row.id);

  it("matches equality, null and every comparison operator", async () => {
    expect(await ids({ title: "axb" })).toEqual([4]);
    expect(await ids({ code: null })).toEqual([3]);
    expect(await ids({ n: { equals: 2 } })).toEqual([2]);
    expect(await ids({ n: { equals: null } })).toEqual([3]);
    expect(await ids({ n: { lt: 2 } })).toEqual([1]);
    expect(await ids({ n: { lte: 2 } })).toEqual([1, 2]);
    expect(await ids({ n: { gt: 6 } })).toEqual([7, 8]);
    expect(await ids({ n: { gte: 6, lt: 8 } })).toEqual([6, 7]);
    expect(await ids({ n: { in: [1, 4, 99] } })).toEqual([1, 4]);
    expect(await ids({ flag: true })).toEqual([1, 4]);
    expect(await ids({ flag: { isNull: true } })).toEqual([3, 6, 7, 8]);
    expect(await ids({ flag: { isNull: false } })).toEqual([1, 2, 4, 5]);
    expect(await ids({ status: "live" })).toEqual([2, 4]);
    expect(await ids({ ref: "6f1c1a2e-1111-4222-8333-444455556666" })).toEqual([1]);
    expect(await ids({ meta: null })).toEqual(ALL);
  });

  it("leaves NULL out of not, notIn and NOT, as SQL does", async () => {
    expect(await ids({ n: { not: 1 } })).toEqual([2, 4, 5, 6, 7, 8]);
    expect(await ids({ n: { not: null } })).toEqual([1, 2, 4, 5, 6, 7, 8]);
    expect(await ids({ n: { notIn: [1, 2] } })).toEqual([4, 5, 6, 7, 8]);
    expect(await ids({ NOT: { n: { gt: 2 } } })).toEqual([1, 2]);
    expect(await ids({ flag: { not: { equals: true } } })).toEqual([2, 5]);
    expect(await ids({ NOT: [{ n: 1 }, { n: 2 }] })).toEqual([4, 5, 6, 7, 8]);
    expect(await ids({ OR: [{ n: { not: 1 } }, { n: { isNull: true } }] })).toEqual([2, 3, 4, 5, 6, 7, 8]);
  });

  it("applies the edge semantics of empty lists", async () => {
    expect(await ids({ n: { in: [] } })).toEqual([]);
    expect(await ids({ n: { notIn: [] } })).toEqual(ALL);
    expect(await ids({ OR: [] })).toEqual([]);
    expect(await ids({ AND: [] })).toEqual(ALL);
    expect(await ids({ NOT: { OR: [] } })).toEqual(ALL);
    expect(await ids({})).toEqual(ALL);
    expect(await ids({ title: {} })).toEqual(ALL);
    expect(await ids({ title: undefined })).toEqual(ALL);
  });

  it("nests AND, OR and NOT", async () => {
    expect(await ids({ OR: [{ n: 1 }, { AND: [{ n: { gte: 4 } }, { flag: false }] }] })).toEqual([1, 5]);
    expect(await ids({ AND: [{ OR: [{ status: "draft" }, { status: "live" }] }, { NOT: { title: { startsWith: "50" } } }] })).toEqual([4, 5]);
    expect(await ids({ AND: { n: 5 } })).toEqual([5]);
    expect(await ids({ n: { gt: 1 }, OR: [{ code: "c" }, { code: "d" }] })).toEqual([4, 5]);
  });

  it("matches text literally and case-sensitively", async () => {
    expect(await ids({ title: { contains: "50%" } })).toEqual([1]);
    expect(await ids({ title: { startsWith: "50" } })).toEqual([1, 2]);
    expect(await ids({ title: { contains: "_" } })).toEqual([3]);
    expect(await ids({ title: { contains: "a_b" } })).toEqual([3]);
    expect(await ids({ title: { contains: "\\" } })).toEqual([5]);
    expect(await ids({ title: { endsWith: "*?[x]" } })).toEqual([6]);
    expect(await ids({ title: { contains: "[x]" } })).toEqual([6]);
    expect(await ids({ title: { contains: "?" } })).toEqual([6]);
    expect(await ids({ title: { contains: "*" } })).toEqual([6]);
    expect(await ids({ title: { contains: "%" } })).toEqual([1]);
    expect(await ids({ title: { contains: "hello" } })).toEqual([]);
    expect(await ids({ title: { contains: "Hello" } })).toEqual([7]);
    expect(await ids({ code: { startsWith: "a" } })).toEqual([2]);
    expect(await ids({ ref: { startsWith: "6f1c" } })).toEqual([1]);
    expect(await ids({ status: { endsWith: "ve" } })).toEqual([2, 4]);
  });

  it("keeps injection attempts as parameters", async () => {
    expect(await ids({ title: INJECTION })).toEqual([8]);
    expect(await ids({ title: { contains: "'); drop" } })).toEqual([8]);
    expect(await ids({ code: { in: [INJECTION, "g"] } })).toEqual([8]);
    const compiled = h.kysely.selectFrom("item").selectAll().where(compileWhere(h.kind, model.tables.item!, { title: INJECTION })!).compile();
    expect(compiled.sql).not.toContain("drop");
    expect(compiled.parameters).toContain(INJECTION);
    expect(await h.db.query.item.count()).toBe(rows.length);
  });

  it("compares decimals, bigints, timestamps and dates by value", async () => {
    // As text, "10" < "9"; decimals compare as numbers on both families.
    expect(await ids({ price: { gt: "9" } })).toEqual([2, 3, 5]);
    expect(await ids({ price: { lt: 1 } })).toEqual([6]);
    expect(await ids({ price: { equals: "10.50" } })).toEqual([3]);
    expect(await ids({ big: "9223372036854775807" })).toEqual([1]);
    expect(await ids({ big: { lt: "0" } })).toEqual([2]);
    expect(await ids({ big: { gt: "9223372036854775806" } })).toEqual([1]);
    expect(await ids({ at: { gt: new Date("2024-03-01T00:00:00Z") } })).toEqual([2, 4]);
    expect(await ids({ at: { gte: "2024-06-01T14:30:00+02:00" } })).toEqual([2, 4]);
    expect(await ids({ at: new Date("2024-01-01T00:00:00.000Z") })).toEqual([1]);
    expect(await ids({ day: { lt: "2024-06-01" } })).toEqual([1]);
    expect(await ids({ day: new Date("2025-01-01T00:00:00Z") })).toEqual([4]);
  });

  const refused: [string, unknown, string, RegExp][] = [
    ["an unknown column", { nope: 1 }, "where.nope", /unknown column "nope" on table "item"/],
    ["an unknown operator", { title: { like: "x" } }, "where.title.like", /unknown operator "like"/],
    ["a wrong value type", { n: { gt: "x" } }, "where.n.gt", /expected a 32-bit integer for a integer column, got "x"/],
    ["a text operator on a number", { n: { contains: "1" } }, "where.n.contains", /applies to text columns, not to a integer column/],
    ["an order operator on text", { title: { lt: "b" } }, "where.title.lt", /applies to numbers/],
    ["a non-string text value", { title: { contains: 1 } }, "where.title.contains", /expected a string/],
    ["a jsonb comparison", { meta: { equals: { a: 1 } } }, "where.meta.equals", /jsonb columns can only be filtered with isNull/],
    ["a deep error", { AND: [{ n: 1 }, { OR: [{ title: { startsWith: 2 } }] }] }, "where.AND[1].OR[0].title.startsWith", /expected a string/],
    ["a null inside in", { n: { in: [1, null] } }, "where.n.in[1]", /use isNull/],
    ["in without an array", { n: { in: 1 } }, "where.n.in", /expected an array/],
    ["a non-boolean isNull", { n: { isNull: "yes" } }, "where.n.isNull", /true or false/],
    ["an array as where", [], "where", /expected an object/],
    ["an invalid date", { day: "2024-02-31" }, "where.day", /YYYY-MM-DD/],
    ["too many values", { n: { in: Array.from({ length: MAX_IN_VALUES + 1 }, (_, i) => i) } }, "where.n.in", /at most/],
  ];
  it.each(refused)("refuses %s with a WhereError naming the path", async (_, where, path, message) => {
    const error = await h.db.query.item.findMany({ where: where as never }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WhereError);
    expect(error).toMatchObject({ path, status: 400 });
    expect((error as Error).message).toMatch(message);
  });
});
