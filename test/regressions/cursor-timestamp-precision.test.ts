import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/**
 * Cursor pages ordered by a `timestamps()` column (docs/resources.md's own example:
 * `orderBy: [{ createdAt: "desc" }]`). PostgreSQL's CURRENT_TIMESTAMP has microseconds; a cursor
 * carries the row's value as a JS Date (milliseconds), so the next page starts at a position that
 * is not the last row's: descending, rows are lost; ascending, rows come twice.
 */
const v1 = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ...timestamps(t) }))
  .build();

describe.each<Family>(families().filter((family) => family !== "sqlite"))("cursor pages over a CURRENT_TIMESTAMP column, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    database = await openDatabase(family);
    built = new App({ db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .resource("post", { permissions: { list: "public" } })
      .build();
    await built.migrator.migrateToLatest();
    // One statement: every row gets the same CURRENT_TIMESTAMP, with its microseconds.
    await built.db.insertInto("post").values(["a", "b", "c", "d", "e"].map((title) => ({ title }))).execute();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  for (const direction of ["desc", "asc"] as const) {
    it(`pages through every row exactly once, createdAt ${direction}`, async () => {
      const client = built.client();
      const seen: number[] = [];
      let page = await client.post.page({ orderBy: [{ createdAt: direction }], take: 2 });
      seen.push(...page.items.map((row: { id: number }) => row.id));
      for (let i = 0; page.nextCursor && i < 10; i++) {
        page = await client.post.page({ orderBy: [{ createdAt: direction }], take: 2, after: page.nextCursor });
        seen.push(...page.items.map((row: { id: number }) => row.id));
      }
      expect(seen.sort()).toEqual([1, 2, 3, 4, 5]);
    });
  }
});
