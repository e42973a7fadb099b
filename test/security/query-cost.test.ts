// Query cost: what one anonymous list request may make the database do.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/postgres.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request, rpc } from "../support/app.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const v1 = schema("1")
  .table("item", (t) => ({ id: t.serial().primaryKey(), title: t.text(), qty: t.integer().default(0) }))
  .table("note", (t) => ({ id: t.serial().primaryKey(), itemId: t.integer().references("item", "id"), body: t.text() }))
  .relation("item", (rel) => ({ notes: rel.hasMany("note", { from: "id", to: "itemId" }) }))
  .build();
const PUBLIC = { list: "public", get: "public", create: "public", update: "public", delete: "public" } as const;

describe.each(families())("query cost on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  const errors: unknown[] = [];
  function createApp(database: TestDatabase) {
    return new App({ db: { dialect: database.dialect, kind: database.kind }, onError: (error) => errors.push(error) }).schema(v1).resource("item", { permissions: PUBLIC });
  }

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createApp(db).start();
    // A user may store a long title: 160,000 characters fit in the default 1 MiB body.
    await app.db.insertInto("item").values({ title: "a".repeat(160_000) }).execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    expect(errors).toEqual([]);
  });

  const list = (where: unknown) => rpc(app, "item.list", { where });

  it("answers a pathological contains on a long stored title with 400, quickly", async () => {
    const started = performance.now();
    const { status, body } = await list({ title: { contains: `${"a".repeat(80_000)}b` } });
    expect([status, body.code, body.message]).toEqual([400, "BAD_REQUEST", "where.title.contains: at most 256 characters (got 80001)"]);
    expect(body.data).toEqual({ path: "where.title.contains" });
    expect(performance.now() - started).toBeLessThan(1000);
    // At the limit it runs, and finds nothing.
    expect(await list({ title: { contains: `${"a".repeat(255)}b` } })).toMatchObject({ status: 200, body: [] });
  });

  it("bounds text operands together, whatever the operator", async () => {
    const three = ["contains", "startsWith", "endsWith"].map((op) => ({ title: { [op]: "x".repeat(200) } }));
    const { status, body } = await list({ OR: three });
    expect([status, body.message]).toEqual([400, "where.OR[2].title.endsWith: text operands of one query may total at most 512 characters"]);
    expect((await list({ OR: three.slice(0, 2) })).status).toBe(200);
  });

  it("counts every operand of every operator in the 20,000-value limit", async () => {
    const clauses = Array.from({ length: 20_001 }, () => ({ title: { endsWith: "" } }));
    expect(await list({ OR: clauses })).toMatchObject({ status: 400, body: { message: "where: at most 20000 values in one query" } });
    expect((await list({ OR: clauses.slice(1) })).status).toBe(200);
    // Clauses that bind nothing count too: each is SQL to compile and evaluate.
    expect(await list({ OR: Array.from({ length: 20_001 }, (_, i) => (i % 2 ? { title: null } : { qty: { isNull: true } })) })).toMatchObject({
      status: 400,
      body: { message: "where: at most 20000 values in one query" },
    });
  });

  it("keeps the bound parameters under the database's limit: 68,000 values are a 400, not a lost connection", async () => {
    const lists = Array.from({ length: 14 }, (_, i) => ({ qty: { notIn: Array.from({ length: 4_858 }, (_, j) => i * 5000 + j) } }));
    const { status, body } = await list({ AND: lists });
    expect([status, body.message]).toEqual([400, "where: at most 20000 values in one query"]);
  });

  it("counts an included relation's where in the same budget (db.query)", async () => {
    const where = Array.from({ length: 4 }, (_, k) => ({ body: { in: Array.from({ length: 4_000 }, (_, i) => `b${k}-${i}`) } }));
    const error = await app.db.query.item
      .findMany({ where: { qty: { notIn: Array.from({ length: 4_001 }, (_, i) => i) } }, include: { notes: { where: { OR: where } } } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, message: "include.notes.where: at most 20000 values in one query" });
  });
});

describe("configurable text operand limits", () => {
  it("takes limits from the database config, and refuses nonsense at start", async () => {
    const database = await openDatabase("sqlite");
    const app = await new App({ db: { dialect: database.dialect, kind: database.kind, limits: { maxTextOperand: 10 } } })
      .schema(v1)
      .resource("item", { permissions: PUBLIC })
      .start();
    try {
      expect((await rpc(app, "item.list", { where: { title: { startsWith: "x".repeat(10) } } })).status).toBe(200);
      expect(await rpc(app, "item.list", { where: { title: { startsWith: "x".repeat(11) } } })).toMatchObject({
        status: 400,
        body: { message: "where.title.startsWith: at most 10 characters (got 11)" },
      });
    } finally {
      await app.close();
    }
    const bad = await openDatabase("sqlite");
    expect(() => new App({ db: { dialect: bad.dialect, kind: bad.kind, limits: { maxTextOperand: 0 } } }).schema(v1).build()).toThrow(
      /Query limit maxTextOperand must be a positive integer, got 0/,
    );
    await bad.close();
  });
});

describe.runIf(process.env.DATABASE_URL)("statement time limit on PostgreSQL", () => {
  it("sets statement_timeout (30 s by default, poolConfig overrides it) on the pool postgresDialect creates; migrations lift it", async () => {
    const url = process.env.DATABASE_URL!;
    const schemaName = `t_cost_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schemaName}`);
    try {
      const plain = new App({ db: { dialect: postgresDialect({ connectionString: url, poolConfig: { options: `-c search_path=${schemaName}` } }), kind: "postgres" } })
        .schema(v1)
        .build();
      await plain.migrator.migrateToLatest();
      const { rows } = await (await import("kysely")).sql<{ statement_timeout: string }>`show statement_timeout`.execute(plain.db);
      expect(rows[0]!.statement_timeout).toBe("30s");
      await plain.close();

      const short = new App({
        db: { dialect: postgresDialect({ connectionString: url, poolConfig: { statement_timeout: 100, options: `-c search_path=${schemaName}` } }), kind: "postgres" },
      })
        .schema(v1)
        .procedure("slow", (base) => base.handler(async ({ context }) => (await (await import("kysely")).sql`select pg_sleep(10)`.execute(context.db), "done")))
        .build();
      // Started and connected first, so the time below is the statement's alone.
      expect((await request(short, "GET", "/health")).status).toBe(200);
      const started = performance.now();
      const { status } = await rpc(short, "slow");
      expect(status).toBe(500);
      // Cut at 100 ms: far sooner than the 10 s the statement asks for, even on a busy machine.
      expect(performance.now() - started).toBeLessThan(5_000);
      await short.close();
    } finally {
      await admin.query(`drop schema if exists ${schemaName} cascade`);
      await admin.end();
    }
  });
});
