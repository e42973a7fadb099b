import { Kysely, Migrator, PostgresAdapter, sql, type Migration } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AcquireTimeoutError, PGliteDialect, reentrant, sqliteDialect, type ReentrantDialect } from "../../kernel/db/dialect/index.js";
import { embedded } from "../../kernel/embedded/index.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

// Run in a zone with an offset: a timestamp read or written as local time would shift.
const originalTz = process.env.TZ;
beforeAll(() => {
  process.env.TZ = "America/New_York";
  expect(new Date("2024-01-02T00:00:00Z").getTimezoneOffset()).not.toBe(0);
});
afterAll(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

const instant = new Date("2024-01-02T03:04:05.678Z");

describe.each(families())("dialect on %s", (family) => {
  let database: TestDatabase;
  let dialect: ReentrantDialect;
  let db: Kysely<any>;

  beforeAll(async () => {
    database = await openDatabase(family);
    dialect = reentrant(database.dialect);
    db = new Kysely<any>({ dialect });
    for (const table of ["tx_seen", "tx_rollback", "tx_concurrent", "tx_nested", "tx_direct", "tx_controlled", "counted"]) {
      await db.schema.createTable(table).addColumn("id", "integer", (c) => c.primaryKey()).addColumn("note", "text").execute();
    }
  });

  afterAll(async () => {
    await db?.destroy();
    await database?.close();
  });

  const ids = async (table: string) =>
    (await db.selectFrom(table).select("id").orderBy("id").execute()).map((row) => row.id);

  describe.runIf(family !== "sqlite")("Postgres values", () => {
    it("round-trips int8, numeric, timestamps, date, bytea and json as the wire rules say", async () => {
      await db.schema
        .createTable("typed")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("big", "int8")
        .addColumn("num", "numeric(24, 4)")
        .addColumn("ts", "timestamp")
        .addColumn("tstz", "timestamptz")
        .addColumn("day", "date")
        .addColumn("bytes", "bytea")
        .addColumn("doc", "jsonb")
        .addColumn("plain", "json")
        .execute();
      await db
        .insertInto("typed")
        .values({
          id: 1,
          big: "9007199254740993", // 2^53 + 1: a number would round it
          num: "12345678901234567.1250",
          ts: instant,
          tstz: instant,
          day: "2024-03-10",
          bytes: new Uint8Array([0, 1, 254, 255]),
          doc: JSON.stringify({ list: [1, "x"], none: null }),
          plain: { a: 1 },
        })
        .execute();
      const row = await db.selectFrom("typed").selectAll().executeTakeFirstOrThrow();

      expect(row.big).toBe("9007199254740993");
      expect(row.num).toBe("12345678901234567.1250");
      expect(row.ts).toBeInstanceOf(Date);
      expect(row.ts.toISOString()).toBe(instant.toISOString());
      expect(row.tstz.toISOString()).toBe(instant.toISOString());
      expect(row.day).toBeInstanceOf(Date);
      expect(row.day.toISOString()).toBe("2024-03-10T00:00:00.000Z");
      expect(row.bytes.constructor).toBe(Uint8Array);
      expect(Array.from(row.bytes)).toEqual([0, 1, 254, 255]);
      expect(row.doc).toEqual({ list: [1, "x"], none: null });
      expect(row.plain).toEqual({ a: 1 });
    });

    it("stores a Date in a timestamp column as UTC wall-clock time", async () => {
      await db.insertInto("typed").values({ id: 2, ts: instant }).execute();
      const { text } = await db
        .selectFrom("typed")
        .select(sql<string>`ts::text`.as("text"))
        .where("id", "=", 2)
        .executeTakeFirstOrThrow();
      expect(text).toBe("2024-01-02 03:04:05.678");
    });

    it("reads offsets, BC years, microseconds and arrays", async () => {
      const row = await dialect.transact(db, async (trx) => {
        await sql`set local time zone 'Asia/Kolkata'`.execute(trx);
        const { rows } = await sql<any>`select
            '2024-01-02 03:04:05.678+00'::timestamptz as kolkata,
            '0044-03-15 12:00:00 BC'::timestamp as ides,
            '2024-01-02 03:04:05.678999'::timestamp as micro,
            array[1::int8, null, 9007199254740993] as bigs,
            array['2024-03-10'::date] as days,
            array['\\x01ff'::bytea] as blobs`.execute(trx);
        return rows[0];
      });
      expect(row.kolkata.toISOString()).toBe(instant.toISOString());
      expect(row.ides.getUTCFullYear()).toBe(-43); // 44 BC is astronomical year -43
      expect(row.micro.toISOString()).toBe("2024-01-02T03:04:05.678Z");
      expect(row.bigs).toEqual(["1", null, "9007199254740993"]);
      expect(row.days[0].toISOString()).toBe("2024-03-10T00:00:00.000Z");
      expect(Array.from(row.blobs[0])).toEqual([1, 255]);
    });

    it("reports the Postgres adapter, so the Migrator takes its advisory lock", () => {
      expect(database.dialect.createAdapter()).toBeInstanceOf(PostgresAdapter);
    });
  });

  describe.runIf(family === "sqlite")("SQLite values", () => {
    it("binds Date, boolean, JSON and byte parameters, and reads BLOBs as Uint8Array", async () => {
      await db.schema
        .createTable("vals")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("at", "text")
        .addColumn("flag", "integer")
        .addColumn("doc", "text")
        .addColumn("bytes", "blob")
        .execute();
      await db
        .insertInto("vals")
        .values([
          { id: 1, at: instant, flag: true, doc: { a: [1] }, bytes: new Uint8Array([1, 2, 3]) },
          { id: 2, at: null, flag: false, doc: null, bytes: null },
        ])
        .execute();
      const row = await db.selectFrom("vals").selectAll().where("flag", "=", true).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ id: 1, at: instant.toISOString(), flag: 1, doc: '{"a":[1]}' });
      expect(row.bytes.constructor).toBe(Uint8Array);
      expect(Array.from(row.bytes)).toEqual([1, 2, 3]);
      expect(await db.selectFrom("vals").select("id").where("flag", "=", false).execute()).toEqual([{ id: 2 }]);
    });

    it("enforces foreign keys", async () => {
      await db.schema.createTable("parent").addColumn("id", "integer", (c) => c.primaryKey()).execute();
      await db.schema
        .createTable("child")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("parentId", "integer", (c) => c.references("parent.id"))
        .execute();
      await expect(db.insertInto("child").values({ id: 1, parentId: 42 }).execute()).rejects.toThrow(/FOREIGN KEY/);
    });
  });

  it("reports affected rows", async () => {
    await db.insertInto("counted").values([{ id: 1 }, { id: 2 }, { id: 3 }]).execute();
    const updated = await db.updateTable("counted").set({ note: "x" }).where("id", "<", 3).executeTakeFirst();
    const deleted = await db.deleteFrom("counted").where("id", "=", 3).executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(2n);
    expect(deleted.numDeletedRows).toBe(1n);
  });

  describe("transact", () => {
    it("routes outer-db queries into the open transaction: they see its rows, without deadlock", async () => {
      await dialect.transact(db, async (trx) => {
        await trx.insertInto("tx_seen").values({ id: 1 }).execute();
        expect(await ids("tx_seen")).toEqual([1]); // outer db, uncommitted row
        await db.insertInto("tx_seen").values({ id: 2 }).execute();
        expect((await trx.selectFrom("tx_seen").select("id").execute()).length).toBe(2);
        expect(dialect.inTransaction).toBe(true);
      });
      expect(dialect.inTransaction).toBe(false);
      expect(await ids("tx_seen")).toEqual([1, 2]);
    });

    it("rolls back the transaction's and the outer db's writes when fn throws, and rethrows", async () => {
      const failure = new Error("boom");
      await expect(
        dialect.transact(db, async (trx) => {
          await trx.insertInto("tx_rollback").values({ id: 1 }).execute();
          await db.insertInto("tx_rollback").values({ id: 2 }).execute();
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await ids("tx_rollback")).toEqual([]);
    });

    it("does not roll back a concurrent write made outside the transaction", async () => {
      let written!: () => void;
      const insideWritten = new Promise<void>((resolve) => (written = resolve));
      let fail!: () => void;
      const failNow = new Promise<void>((resolve) => (fail = resolve));

      const transaction = dialect.transact(db, async (trx) => {
        await trx.insertInto("tx_concurrent").values({ id: 1 }).execute();
        written();
        await failNow;
        throw new Error("rolled back");
      });
      await insideWritten;
      // Issued from outside the transaction while it is open.
      const outside = db.insertInto("tx_concurrent").values({ id: 2 }).execute();
      setTimeout(fail, 50);

      await expect(transaction).rejects.toThrow("rolled back");
      await outside;
      expect(await ids("tx_concurrent")).toEqual([2]);
    });

    it("joins a nested transact through a savepoint: a failed one undoes only its own work", async () => {
      await dialect.transact(db, async () => {
        await db.insertInto("tx_nested").values({ id: 1 }).execute();
        await expect(
          dialect.transact(db, async (inner) => {
            await inner.insertInto("tx_nested").values({ id: 2 }).execute();
            throw new Error("inner");
          }),
        ).rejects.toThrow("inner");
        await dialect.transact(db, (inner) => inner.insertInto("tx_nested").values({ id: 3 }).execute());
      });
      expect(await ids("tx_nested")).toEqual([1, 3]);

      await expect(
        dialect.transact(db, async () => {
          await dialect.transact(db, (inner) => inner.insertInto("tx_nested").values({ id: 4 }).execute());
          throw new Error("outer");
        }),
      ).rejects.toThrow("outer");
      expect(await ids("tx_nested")).toEqual([1, 3]); // the nested commit went with the outer rollback
    });

    it("turns db.transaction() on the outer db inside transact into a savepoint", async () => {
      await expect(
        dialect.transact(db, async (trx) => {
          await trx.insertInto("tx_direct").values({ id: 1 }).execute();
          await db.transaction().execute((inner) => inner.insertInto("tx_direct").values({ id: 2 }).execute());
          expect(await ids("tx_direct")).toEqual([1, 2]);
          throw new Error("undo all");
        }),
      ).rejects.toThrow("undo all");
      expect(await ids("tx_direct")).toEqual([]);
    });
  });

  it("keeps Kysely's controlled transactions and their savepoints working", async () => {
    const trx = await db.startTransaction().execute();
    await trx.insertInto("tx_controlled").values({ id: 1 }).execute();
    const saved = await trx.savepoint("before_two").execute();
    await saved.insertInto("tx_controlled").values({ id: 2 }).execute();
    await saved.rollbackToSavepoint("before_two").execute();
    await trx.commit().execute();
    expect(await ids("tx_controlled")).toEqual([1]);
  });

  it("wraps once: reentrant() of a wrapped dialect is that dialect, and transact travels unbound", async () => {
    const { dialect: same, transact } = reentrant(database.dialect);
    expect(same).toBe(dialect);
    expect(await transact(db, async () => dialect.inTransaction)).toBe(true);
  });

  it("runs Kysely's Migrator (its lock included) in a transaction", async () => {
    const migrations: Record<string, Migration> = {
      "0001_a": { up: (m) => m.schema.createTable("migrated").addColumn("id", "integer").execute() },
      "0002_b": { up: (m) => m.schema.alterTable("migrated").addColumn("name", "text").execute() },
    };
    // Its tables in this database's own schema: another test file's schema may hold some too.
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: database.schema });
    const { error, results } = await migrator.migrateToLatest();
    expect(error).toBeUndefined();
    expect(results?.map((r) => r.status)).toEqual(["Success", "Success"]);
    await db.insertInto("migrated").values({ id: 1, name: "ok" }).execute();
  });
});

describe("acquire timeout on single-connection databases", () => {
  const deadlock = async (db: Kysely<any>) => {
    const error = await db
      .transaction()
      .execute(() => db.selectNoFrom(sql<number>`1`.as("one")).execute())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AcquireTimeoutError);
    expect((error as Error).name).toBe("AcquireTimeoutError");
    expect((error as Error).message).toMatch(/deadlock.*outer db.*transact\(\)/s);
    // The timed-out waiter left the queue: the connection is usable again.
    expect(await db.selectNoFrom(sql<number>`1`.as("one")).execute()).toEqual([{ one: 1 }]);
  };

  it("PGlite: an outer-db query inside db.transaction() fails with a named error", async () => {
    const database = embedded({ dataDir: "memory://" });
    const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite: database.client, acquireTimeoutMs: 200 }) });
    try {
      await deadlock(db);
    } finally {
      await db.destroy();
      expect(database.client.closed).toBe(true);
      await database.close();
    }
  });

  it("SQLite: the same", async () => {
    const db = new Kysely<any>({ dialect: sqliteDialect({ filename: ":memory:", acquireTimeoutMs: 200 }) });
    try {
      await deadlock(db);
    } finally {
      await db.destroy();
    }
  });
});
