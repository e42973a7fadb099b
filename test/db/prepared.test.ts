/**
 * Named prepared statements (PGlite and PostgreSQL): a statement the server no longer has as it was
 * prepared (dropped by DEALLOCATE, or its result's columns changed by a migration) still answers.
 */
import { Kysely, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

describe.each<Family>(families().filter((family) => family !== "sqlite"))("prepared statements on %s", (family) => {
  let database: TestDatabase;
  let db: Kysely<any>;

  const open = async () => {
    database = await openDatabase(family);
    // Sequential statements reuse one connection (PGlite has one; pg hands back the last released).
    db = new Kysely<any>({ dialect: database.dialect });
    await sql`create table item (id int primary key, name text not null)`.execute(db);
    await sql`insert into item values (1, 'one'), (2, 'two')`.execute(db);
  };
  afterEach(async () => {
    await db.destroy();
    await database.close();
  });

  const byId = (id: number) => sql<Record<string, unknown>>`select * from item where id = ${id}`.execute(db).then((result) => result.rows);

  it("answers again after the statement was deallocated", async () => {
    await open();
    expect(await byId(1)).toEqual([{ id: 1, name: "one" }]);
    await sql`deallocate all`.execute(db);
    expect(await byId(2)).toEqual([{ id: 2, name: "two" }]);
    expect(await byId(1)).toEqual([{ id: 1, name: "one" }]);
  });

  it("answers with the new columns after a migration changed the result", async () => {
    await open();
    expect(await byId(1)).toEqual([{ id: 1, name: "one" }]);
    await sql`alter table item add column size int not null default 7`.execute(db);
    expect(await byId(1)).toEqual([{ id: 1, name: "one", size: 7 }]);
    expect(await byId(2)).toEqual([{ id: 2, name: "two", size: 7 }]);
  });

  it("keeps the database error's fields on a failing prepared statement", async () => {
    await open();
    const insert = (id: number) => sql`insert into item (id, name) values (${id}, ${"x"})`.execute(db);
    await insert(3);
    const error = await insert(3).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "23505", constraint: "item_pkey" });
  });
});

describe("prepared statements on one PGlite instance shared by two Kysely instances", () => {
  it("names each statement text once for the instance, so the two never collide", async () => {
    const database = await openDatabase("pglite");
    const [a, b] = [new Kysely<any>({ dialect: database.dialect }), new Kysely<any>({ dialect: database.dialect })];
    try {
      await sql`create table item (id int primary key, name text not null)`.execute(a);
      await sql`insert into item values (1, 'one')`.execute(a);
      expect((await sql`select name from item where id = ${1}`.execute(a)).rows).toEqual([{ name: "one" }]);
      expect((await sql`select id from item where name = ${"one"}`.execute(b)).rows).toEqual([{ id: 1 }]);
      expect((await sql`select name from item where id = ${1}`.execute(b)).rows).toEqual([{ name: "one" }]);
    } finally {
      await b.destroy().catch(() => {});
      await a.destroy().catch(() => {});
      await database.close();
    }
  });
});
