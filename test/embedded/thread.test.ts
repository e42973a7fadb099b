import { Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded, type EmbeddedDatabase } from "../../kernel/embedded/index.js";
import { classifyDatabaseError } from "../../kernel/db/errors.js";
import { App } from "../../presets/trellis.js";

describe('embedded({ thread: "worker" })', () => {
  let database: EmbeddedDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    database = embedded({ dataDir: "memory://", thread: "worker" });
    db = new Kysely<any>({ dialect: database.dialect });
    await db.schema.createTable("item").addColumn("id", "integer", (c) => c.primaryKey()).addColumn("data", "bytea").execute();
  }, 120_000); // the thread's first memory:// database builds the template

  afterAll(async () => {
    await db.destroy();
  });

  it("runs SQL off the request thread: a long statement leaves the event loop free", async () => {
    expect(database.thread).toBe("worker");
    const started = performance.now();
    let worstGap = 0;
    let last = started;
    const ticker = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    await sql`select count(*) from generate_series(1, 3000000)`.execute(db);
    clearInterval(ticker);
    const took = performance.now() - started;
    expect(took).toBeGreaterThan(200); // long enough that an in-thread run would show the gap
    expect(worstGap).toBeLessThan(took / 2);
  });

  it("keeps the database error's fields, so the error mapping reads it as in-thread", async () => {
    await db.insertInto("item").values({ id: 1 }).execute();
    const error = await db.insertInto("item").values({ id: 1 }).execute().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: "23505", constraint: "item_pkey", table: "item" });
    expect(classifyDatabaseError(error)).toEqual({
      status: 409,
      code: "CONFLICT",
      message: "Unique constraint violated on item.id",
      data: { table: "item", column: "id", constraint: "item_pkey" },
    });
  });

  it("holds a transaction on the one connection: rolled back as a whole, invisible to outside queries until commit", async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto("item").values({ id: 2 }).execute();
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect(await db.selectFrom("item").select("id").where("id", "=", 2).execute()).toEqual([]);
    let outside: Promise<unknown[]> | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("item").values({ id: 3 }).execute();
      outside = db.selectFrom("item").select("id").where("id", "=", 3).execute();
    });
    // The outside query waited for the connection, so it sees the committed row.
    expect(await outside).toEqual([{ id: 3 }]);
  });

  it("returns large byte values intact, handed over rather than copied", async () => {
    const bytes = new Uint8Array(1 << 20).map((_, i) => i % 251);
    await db.insertInto("item").values({ id: 4, data: bytes }).execute();
    const row = await db.selectFrom("item").select("data").where("id", "=", 4).executeTakeFirstOrThrow();
    expect(row.data).toBeInstanceOf(Uint8Array);
    expect(row.data.byteLength).toBe(bytes.byteLength);
    expect(Buffer.compare(row.data, bytes)).toBe(0);
  });

  it("runs statements in the order they were sent", async () => {
    await db.schema.createTable("log").addColumn("n", "integer").execute();
    await Promise.all(Array.from({ length: 50 }, (_, n) => db.insertInto("log").values({ n }).execute()));
    const rows = await sql<{ n: number }>`select n from log`.execute(db);
    expect(rows.rows.map((row) => row.n)).toEqual(Array.from({ length: 50 }, (_, n) => n));
  });

  it("answers statements sent back to back and after pauses, in order", async () => {
    // Two at once (the second queued behind the first on the thread), then pauses of various
    // lengths between pairs: the thread wakes for each, and answers each pair in the order sent.
    const pauses = [0, 1, 0, 30, 0, 5, 60, 0];
    const seen: number[] = [];
    for (const [n, pause] of pauses.entries()) {
      if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
      const [first, second] = await Promise.all([
        sql<{ n: number }>`select ${n}::int as n`.execute(db),
        sql<{ n: number }>`select ${n + 100}::int as n`.execute(db),
      ]);
      seen.push(first.rows[0]!.n, second.rows[0]!.n);
    }
    expect(seen).toEqual(pauses.flatMap((_, n) => [n, n + 100]));
    // A transaction spans both: BEGIN answered, then a pause on the thread's side, then its statements and COMMIT.
    await db.transaction().execute(async (trx) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await trx.insertInto("item").values({ id: 50 }).execute();
    });
    expect(await db.selectFrom("item").select("id").where("id", "=", 50).execute()).toEqual([{ id: 50 }]);
  });

  it("rejects an unknown thread setting", () => {
    expect(() => embedded({ dataDir: "memory://", thread: "gpu" as never })).toThrow('embedded(): thread must be "main" or "worker", not "gpu"');
  });

  it("after close(), queries fail as on a closed PGlite", async () => {
    const other = embedded({ dataDir: "memory://", thread: "worker" });
    await other.ready();
    await other.close();
    expect(other.client.closed).toBe(true);
    await expect(other.client.query("select 1")).rejects.toThrow("PGlite is closed");
  });

  it("answers /health while another request runs a long query", async () => {
    const built = await new App({ db: embedded({ dataDir: "memory://", thread: "worker" }), onError: () => {} }).start();
    try {
      let finished = false;
      const long = sql`select count(*) from generate_series(1, 6000000)`.execute(built.db).then(() => (finished = true));
      await new Promise((resolve) => setTimeout(resolve, 50)); // the statement is on the thread
      const response = await built.handle(new Request("http://localhost/health"));
      // Answered while the query still ran, not after it.
      expect(finished).toBe(false);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: "ok", database: "up" });
      await long;
    } finally {
      await built.close();
    }
  }, 120_000);
});
