import { Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueryApi } from "../../kernel/db/query.js";
import { liveFilter, liveTable } from "../../kernel/db/live-match.js";
import { createTablesStatements } from "../../kernel/db/ddl.js";
import { schema } from "../../kernel/schema/index.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/**
 * The in-memory filter a live query matches written rows against, checked against the database
 * itself: for every `where` and every row, "may match" must hold whenever SQL matches (else a
 * subscriber misses a change), and must equal SQL wherever the types are ones it decides (else it
 * re-runs for nothing). Rows are read as drivers return them and, on PostgreSQL, as NOTIFY's JSON.
 */

const v1 = schema("1")
  .table("t", (t) => ({
    id: t.serial().primaryKey(),
    name: t.text().nullable(),
    n: t.integer().nullable(),
    big: t.bigint().nullable(),
    flag: t.boolean().nullable(),
    u: t.uuid().nullable(),
    at: t.timestamp().nullable(),
    data: t.jsonb().nullable(),
  }))
  .build();
const table = v1.tables.t!;

const UUID = "0f8e4b1a-2c3d-4e5f-8a9b-0c1d2e3f4a5b";
const ROWS = [
  { name: "ada", n: 1, big: "9007199254740993", flag: true, u: UUID, at: new Date("2024-01-01T00:00:00Z"), data: { a: 1 } },
  { name: "bob", n: 2, big: "-5", flag: false, u: null, at: null, data: null },
  { name: null, n: null, big: null, flag: null, u: null, at: null, data: null },
  { name: "a_b%c", n: -3, big: "0", flag: true, u: "ffffffff-ffff-4fff-bfff-ffffffffffff", at: new Date("2030-06-01T12:00:00.123Z"), data: [1] },
  { name: "Ada", n: 100, big: "12", flag: false, u: null, at: null, data: "x" },
];

/** Decided in memory: exact. */
const DECIDED: unknown[] = [
  { name: "ada" },
  { name: { not: "ada" } },
  { name: null },
  { name: { not: null } },
  { name: { in: ["ada", "bob"] } },
  { name: { notIn: ["ada"] } },
  { name: { in: [] } },
  { name: { notIn: [] } },
  { name: { contains: "_b%" } },
  { name: { startsWith: "A" } },
  { name: { endsWith: "a" } },
  { NOT: { name: "ada" } },
  { NOT: [{ name: "ada" }, { n: 2 }] },
  { OR: [{ name: "ada" }, { n: { gt: 50 } }] },
  { OR: [] },
  { AND: [] },
  { OR: [{ name: { not: "ada" } }, { n: { lt: 0 } }] },
  { n: { gte: 1, lte: 2 } },
  { n: { not: { in: [1, 2] } } },
  { big: "9007199254740993" },
  { big: { gt: "0" } },
  { flag: true },
  { flag: { not: true } },
  { u: UUID.toUpperCase() },
  { u: { startsWith: "0f8e" } },
  { id: { in: [1, 3] } },
  { AND: [{ name: { isNull: false } }, { OR: [{ flag: false }, { NOT: { n: { lt: 2 } } }] }] },
  { data: { isNull: true } },
  { data: null },
];

/** Left to SQL (timestamps, a jsonb null): "may match" must only never miss. */
const UNDECIDED: unknown[] = [{ at: { gt: new Date("2025-01-01T00:00:00Z") } }, { at: null }, { OR: [{ at: { lt: new Date("2025-01-01T00:00:00Z") } }, { name: "bob" }] }, { NOT: { at: { isNull: true } } }];

describe.each<Family>(families())("live filters agree with SQL on %s", (family) => {
  let database: TestDatabase;
  let db: Kysely<any>;
  let rows: { id: unknown; row: Record<string, unknown> }[] = [];
  let query: any;

  beforeAll(async () => {
    database = await openDatabase(family);
    db = new Kysely<any>({ dialect: database.dialect });
    for (const statement of createTablesStatements(database.kind, [table])) await sql.raw(statement).execute(db);
    query = createQueryApi(db, database.kind, v1).t;
    for (const row of ROWS) {
      const encoded = { ...row, flag: database.kind === "sqlite" && row.flag !== null ? Number(row.flag) : row.flag, at: database.kind === "sqlite" ? row.at?.toISOString() ?? null : row.at, data: row.data === null ? null : JSON.stringify(row.data) };
      await db.insertInto("t").values(encoded).execute();
    }
    // As the feed sees them (RETURNING of every column), and as NOTIFY sends them on PostgreSQL.
    rows = (await db.selectFrom("t").selectAll().execute()).map((row) => ({ id: row.id, row }));
    if (database.kind === "postgres") {
      const { rows: json } = await sql<{ j: string }>`select to_jsonb(t)::text as j from t`.execute(db);
      rows.push(...json.map(({ j }) => ({ id: JSON.parse(j).id, row: JSON.parse(j) })));
    }
  });
  afterAll(async () => {
    await db.destroy();
    await database.close();
  });

  const check = async (where: unknown, exact: boolean) => {
    const matched = new Set((await query.findMany({ where })).map((row: { id: unknown }) => String(row.id)));
    const filter = liveFilter(database.kind, liveTable(database.kind, table)!, table, { where })!;
    for (const { id, row } of rows) {
      const sqlSays = matched.has(String(id));
      const memory = filter.mayMatch(row);
      if (sqlSays) expect(memory, `${JSON.stringify(where)} on row ${JSON.stringify(row)}: SQL matches`).toBe(true);
      else if (exact) expect(memory, `${JSON.stringify(where)} on row ${JSON.stringify(row)}: SQL does not match`).toBe(false);
    }
  };

  it("decides every supported filter exactly as SQL does", async () => {
    for (const where of DECIDED) await check(where, true);
  });

  it("never rules out a row SQL matches where it cannot decide", async () => {
    for (const where of UNDECIDED) await check(where, false);
  });

  it("pins top-level equalities, the owner scope among them", () => {
    const live = liveTable(database.kind, table)!;
    const pins = (where: unknown) => liveFilter(database.kind, live, table, { where })!.pins;
    expect(pins({ AND: [{ name: { startsWith: "a" } }, { n: 7 }] })).toEqual([{ column: "n", value: "7" }]);
    expect(pins({ AND: [{ flag: true }, { name: { equals: "ada" } }] })).toEqual([{ column: "flag", value: "t" }, { column: "name", value: "ada" }]);
    expect(pins({ OR: [{ n: 1 }, { n: 2 }] })).toEqual([]);
    expect(pins({ NOT: { n: 1 } })).toEqual([]);
    // Includes and skip cannot be decided from a written row.
    expect(liveFilter(database.kind, live, table, { skip: 2 })).toBeUndefined();
  });
});
