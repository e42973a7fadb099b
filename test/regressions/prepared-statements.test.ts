/**
 * Named prepared statements on PostgreSQL (kernel/db/dialect/pg-prepared.ts): defects found in review.
 */
import { Kysely, sql } from "kysely";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/postgres.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const postgres = families().includes("postgres");

describe.runIf(postgres)("prepared statements on PostgreSQL", () => {
  let database: TestDatabase | undefined;
  const kyselys: Kysely<any>[] = [];
  afterEach(async () => {
    for (const db of kyselys.splice(0)) await db.destroy().catch(() => {});
    await database?.close();
    database = undefined;
  });

  it("two Kysely instances over one dialect on one pool never give one name to two statement texts", async () => {
    database = await openDatabase("postgres");
    const [a, b] = [new Kysely<any>({ dialect: database.dialect }), new Kysely<any>({ dialect: database.dialect })];
    kyselys.push(a, b);
    await sql`create table item (id int primary key, name text not null)`.execute(a);
    await sql`insert into item values (1, 'one')`.execute(a);
    expect((await sql`select name from item where id = ${1}`.execute(a)).rows).toEqual([{ name: "one" }]);
    // Sequential statements reuse the connection the first one released.
    expect((await sql`select id from item where name = ${"one"}`.execute(b)).rows).toEqual([{ id: 1 }]);
  });

  it("a statement gone stale inside a transaction answers again once the transaction is over", async () => {
    const url = process.env.DATABASE_URL!;
    const schema = `t_stale_${Date.now()}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const pool = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` });
    const db = new Kysely<any>({ dialect: postgresDialect({ pool }) });
    try {
      await sql`create table item (id int primary key, n int not null)`.execute(db);
      await sql`insert into item values (1, 7)`.execute(db);
      const read = (q: Kysely<any>) => q.selectFrom("item").select(["id", "n"]).where("id", "=", 1).execute();
      expect(await read(db)).toEqual([{ id: 1, n: 7 }]);
      // Another replica's migration changes the result's type under the prepared name.
      await admin.query(`alter table ${schema}.item alter column n type bigint`);
      // Inside a transaction the stale statement fails (documented: the transaction is aborted).
      await expect(db.transaction().execute((trx) => read(trx))).rejects.toThrow(/cached plan must not change result type/);
      // Outside it, the statement is "forgotten and run again" (docs/database.md).
      expect(await read(db)).toEqual([{ id: 1, n: "7" }]);
      expect(await read(db)).toEqual([{ id: 1, n: "7" }]);
    } finally {
      await db.destroy().catch(() => {});
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  });

  it("a statement deallocated under a transaction answers again once the transaction is over", async () => {
    database = await openDatabase("postgres");
    const db = new Kysely<any>({ dialect: database.dialect });
    kyselys.push(db);
    await sql`create table item (id int primary key, n int not null)`.execute(db);
    await sql`insert into item values (1, 7)`.execute(db);
    const read = (q: Kysely<any>) => q.selectFrom("item").select(["id", "n"]).where("id", "=", 1).execute();
    await db.connection().execute(async (connection) => {
      expect(await read(connection)).toEqual([{ id: 1, n: 7 }]);
      await sql`deallocate all`.execute(connection);
      await expect(connection.transaction().execute((trx) => read(trx))).rejects.toThrow();
      expect(await read(connection)).toEqual([{ id: 1, n: 7 }]);
    });
  });
});
