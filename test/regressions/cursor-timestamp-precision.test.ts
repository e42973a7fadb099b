import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/**
 * Cursor pages ordered by a `timestamps()` column (docs/resources.md's own example:
 * `orderBy: [{ createdAt: "desc" }]`). PostgreSQL's CURRENT_TIMESTAMP has microseconds; a cursor
 * carried the row's value as a JS Date (milliseconds), so the next page started at a position that
 * was not the last row's: descending, rows were lost; ascending, rows came twice. Timestamp columns
 * now hold milliseconds on PostgreSQL (`timestamptz(3)`), and a cursor over a column declared
 * before that carries the microseconds PostgreSQL wrote.
 */
const v1 = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ...timestamps(t) }))
  .build();

async function open(family: Family): Promise<{ database: TestDatabase; built: any }> {
  const database = await openDatabase(family);
  const built = new App({ db: { dialect: database.dialect, kind: database.kind } })
    .schema(v1)
    .resource("post", { permissions: { list: "public" } })
    .build();
  await built.migrator.migrateToLatest();
  return { database, built };
}

/** Every id of every page, in page order (at most ten pages: a cursor that loops stops here). */
async function walk(built: any, direction: "asc" | "desc"): Promise<number[]> {
  const client = built.client();
  const seen: number[] = [];
  let page = await client.post.page({ orderBy: [{ createdAt: direction }], take: 2 });
  seen.push(...page.items.map((row: { id: number }) => row.id));
  for (let i = 0; page.nextCursor && i < 10; i++) {
    page = await client.post.page({ orderBy: [{ createdAt: direction }], take: 2, after: page.nextCursor });
    seen.push(...page.items.map((row: { id: number }) => row.id));
  }
  return seen;
}

describe.each<Family>(families())("cursor pages over a CURRENT_TIMESTAMP column, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    ({ database, built } = await open(family));
    // One statement: every row gets the same CURRENT_TIMESTAMP (with microseconds, before (3)).
    await built.db.insertInto("post").values(["a", "b", "c", "d", "e"].map((title) => ({ title }))).execute();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  for (const direction of ["desc", "asc"] as const) {
    it(`pages through every row exactly once, createdAt ${direction}`, async () => {
      // Equal createdAt: the primary key orders the tie, ascending.
      expect(await walk(built, direction)).toEqual([1, 2, 3, 4, 5]);
    });
  }

  it("finds a row by the createdAt it was read with (equals, in, gte/lte)", async () => {
    await built.db.insertInto("post").values({ title: "alone" }).execute();
    const client = built.client();
    const [row] = await client.post.list({ where: { title: { equals: "alone" } } });
    expect(row.createdAt).toBeInstanceOf(Date);
    for (const where of [
      { createdAt: { equals: row.createdAt } },
      { createdAt: { in: [row.createdAt] } },
      { createdAt: { gte: row.createdAt, lte: row.createdAt } },
      { updatedAt: { equals: row.updatedAt } },
    ]) {
      const found = await client.post.list({ where: { ...where, id: { equals: row.id } } });
      expect(found.map((one: { id: number }) => one.id)).toEqual([row.id]);
    }
  });

  it.runIf(family !== "sqlite")("stores milliseconds: a value written with microseconds reads back as the Date it rounds to", async () => {
    const { rows } = await sql<{ type: string }>`select format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = 'post'::regclass and attname = 'createdAt'`.execute(built.db);
    expect(rows).toEqual([{ type: "timestamp(3) with time zone" }]);
    await built.db.insertInto("post").values({ title: "micro", createdAt: sql`'2024-01-02T03:04:05.123600Z'` as any }).execute();
    const [row] = await built.client().post.list({ where: { title: { equals: "micro" } } });
    expect(row.createdAt.toISOString()).toBe("2024-01-02T03:04:05.124Z");
    const found = await built.client().post.list({ where: { createdAt: { equals: row.createdAt } } });
    expect(found.map((one: { title: string }) => one.title)).toEqual(["micro"]);
  });
});

/**
 * A database migrated before timestamps had millisecond precision keeps `timestamptz` columns (with
 * microseconds) until they are altered (docs/migrations.md). Its cursors still name the exact row.
 */
describe.each<Family>(families().filter((family) => family !== "sqlite"))("cursor pages over a timestamptz column with microseconds, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    ({ database, built } = await open(family));
    await sql`alter table "post" alter column "createdAt" type timestamptz`.execute(built.db);
    // Ids 1..5; two rows share an instant, two share a millisecond but not its microseconds.
    const at = [".123457", ".123456", ".123999", ".123456", ".122"];
    for (const [i, fraction] of at.entries()) {
      await sql`insert into "post" ("title", "createdAt") values (${`p${i + 1}`}, ${`2024-01-02T03:04:05${fraction}Z`})`.execute(built.db);
    }
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  it("pages ascending in order, every row once", async () => {
    expect(await walk(built, "asc")).toEqual([5, 2, 4, 1, 3]);
  });

  it("pages descending in order, every row once", async () => {
    expect(await walk(built, "desc")).toEqual([3, 1, 2, 4, 5]);
  });

  it("carries the microseconds in the cursor, and refuses a cursor whose instant is not one", async () => {
    const first = await rpc(built, "post.page", { orderBy: [{ createdAt: "asc" }], take: 2 });
    expect(first.status).toBe(200);
    const [, , , values] = JSON.parse(Buffer.from(first.body.nextCursor, "base64url").toString("utf8"));
    expect(values).toEqual(["2024-01-02T03:04:05.123456Z", 2]);
    const forged = Buffer.from(JSON.stringify([1, "post", "createdAt:asc,id:asc", ["2024-13-02T03:04:05.123456Z", 2]])).toString("base64url");
    const answer = await rpc(built, "post.page", { orderBy: [{ createdAt: "asc" }], take: 2, after: forged });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^after: not a cursor \(createdAt: /);
  });

  it("starts again without drift, and the statements of docs/migrations.md convert the column", async () => {
    expect((await built.migrator.migrateToLatest()).error).toBeUndefined();
    const client = built.client();
    const [row] = await client.post.list({ where: { id: { equals: 1 } } });
    expect(await client.post.list({ where: { createdAt: { equals: row.createdAt } } })).toEqual([]);
    const { rows } = await sql<{ statement: string }>`
      select format('alter table %I alter column %I type timestamptz(3);', table_name, column_name) as statement
      from information_schema.columns
      where table_schema = current_schema() and data_type = 'timestamp with time zone' and datetime_precision > 3`.execute(built.db);
    expect(rows).toEqual([{ statement: 'alter table post alter column "createdAt" type timestamptz(3);' }]);
    await sql.raw(rows[0]!.statement).execute(built.db);
    // .123457 and both .123456 round to .123.
    const found = await client.post.list({ where: { createdAt: { equals: row.createdAt } } });
    expect(found.map((one: { id: number }) => one.id)).toEqual([1, 2, 4]);
    expect(row.createdAt.toISOString()).toBe("2024-01-02T03:04:05.123Z");
    expect(await walk(built, "asc")).toEqual([5, 1, 2, 4, 3]);
  });
});
