import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";

/**
 * SQLite timestamps written in SQLite's own `YYYY-MM-DD HH:MM:SS` form (an external writer, a
 * `datetime('now')` default) beside Trellis's ISO text. The column orders as text, so a legacy value
 * sorts before every ISO value of its day; a cursor carried the last row's instant as ISO text, which
 * is not where that row stands in the text order: the next page skipped rows (ascending) or gave
 * them again (descending).
 */
const v1 = schema("1")
  .table("event", (t) => ({ id: t.serial().primaryKey(), title: t.text(), at: t.timestamp() }))
  .build();

const STORED: [number, string][] = [
  [1, "2024-01-02T01:00:00.000Z"],
  [2, "2024-01-02 02:00:00"],
  [3, "2024-01-02T03:00:00.000Z"],
  [4, "2024-01-02 04:00:00"],
  [5, "2024-01-02 04:00:00"],
  [6, "2024-01-02T05:00:00.000Z"],
  [7, "2024-01-02 06:00:00"],
];

describe("cursor pages over SQLite timestamps stored in the legacy text form", () => {
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    built = new App({ db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .resource("event", { permissions: { list: "public" } })
      .build();
    await built.migrator.migrateToLatest();
    for (const [id, at] of STORED) await sql`insert into "event" ("id", "title", "at") values (${id}, ${`e${id}`}, ${at})`.execute(built.db);
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  /** Every id of every page, in page order (at most ten pages: a cursor that loops stops here). */
  async function walk(direction: "asc" | "desc", take: number): Promise<number[]> {
    const client = built.client();
    const seen: number[] = [];
    let page = await client.event.page({ orderBy: [{ at: direction }], take });
    seen.push(...page.items.map((row: { id: number }) => row.id));
    for (let i = 0; page.nextCursor && i < 10; i++) {
      page = await client.event.page({ orderBy: [{ at: direction }], take, after: page.nextCursor });
      seen.push(...page.items.map((row: { id: number }) => row.id));
    }
    return seen;
  }

  for (const direction of ["asc", "desc"] as const) {
    for (const take of [1, 2, 3]) {
      it(`pages through every row exactly once, at ${direction}, ${take} a page`, async () => {
        const all = (await built.client().event.list({ orderBy: [{ at: direction }] })).map((row: { id: number }) => row.id);
        expect([...all].sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(await walk(direction, take)).toEqual(all);
      });
    }
  }
});
