import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded, type EmbeddedDatabase } from "../../kernel/embedded/index.js";

describe("embedded({ dataDir: 'memory://' })", () => {
  let database: EmbeddedDatabase;
  let db: Kysely<any>;

  beforeAll(() => {
    database = embedded({ dataDir: "memory://" });
    db = new Kysely<any>({ dialect: database.dialect });
  });

  afterAll(async () => {
    await db.destroy();
  });

  it("is a postgres-kind database with the vector extension created before the first query", async () => {
    expect(database.kind).toBe("postgres");
    const { rows } = await sql<any>`select '[1,2,3]'::vector as v, '[1,2,3]'::vector <-> '[1,2,5]'::vector as distance`.execute(db);
    expect(rows[0]).toEqual({ v: "[1,2,3]", distance: 2 });
  }, 90_000); // the process's first memory:// database builds the template

  it("exposes a client that parses values by the same rules, in either thread", async () => {
    const { rows } = await database.client.query("select 5::int8 as n, '2024-03-10'::date as d");
    expect(rows[0]).toEqual({ n: "5", d: new Date("2024-03-10T00:00:00Z") });
    expect(database.live).toEqual({ kind: "pglite", client: database.client });
  });

  it("in-thread, exposes the PGlite instance with the live extension", async () => {
    const inThread = embedded({ dataDir: "memory://", thread: "main" });
    const db = new Kysely<any>({ dialect: inThread.dialect });
    expect(inThread.thread).toBe("main");
    expect(inThread.client).toBeInstanceOf(PGlite);
    await db.schema.createTable("feed").addColumn("id", "integer").execute();
    const counts: string[] = [];
    let seen!: () => void;
    const second = new Promise<void>((resolve) => (seen = resolve));
    const query = await inThread.client.live.query<{ n: string }>("select count(*) as n from feed", [], (result) => {
      counts.push(result.rows[0]!.n);
      if (counts.length === 2) seen();
    });
    await db.insertInto("feed").values({ id: 1 }).execute();
    await second;
    await query.unsubscribe();
    expect(counts).toEqual(["0", "1"]);
    await db.destroy();
  }, 90_000); // builds the request thread's own template when the default is the database thread

  it("gives every memory:// database its own data, and closes with its Kysely instance", async () => {
    await db.schema.createTable("mine").addColumn("id", "integer").execute();
    const other = embedded({ dataDir: "memory://" });
    const otherDb = new Kysely<any>({ dialect: other.dialect });
    const { rows } = await sql<{ t: string | null }>`select to_regclass('mine')::text as t`.execute(otherDb);
    expect(rows).toEqual([{ t: null }]);
    await otherDb.destroy();
    expect(other.client.closed).toBe(true);
    await other.close(); // still fine afterwards
  });

  it("close() is idempotent", async () => {
    const other = embedded({ dataDir: "memory://" });
    await other.ready();
    await Promise.all([other.close(), other.close()]);
    await other.close();
    expect(other.client.closed).toBe(true);
  });

  it("rejects a dataDir scheme it cannot serve", () => {
    expect(() => embedded({ dataDir: "idb://app" })).toThrow(/unsupported dataDir "idb:\/\/app"/);
  });
});
