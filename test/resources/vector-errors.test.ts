import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase } from "../support/databases.js";
import { sqliteMemory } from "../support/app.js";

// Where pgvector is not: SQLite refuses a vector column when the app is built; a PostgreSQL server
// without the extension fails the migration with a code of its own, rolled back.

const v1 = schema("1").table("doc", (t) => ({ id: t.serial().primaryKey(), embedding: t.vector(3).index() })).build();

describe("vector columns where pgvector is missing", () => {
  it("SQLite: a coded build error naming the column", () => {
    const app = new App({ name: "vectors", db: sqliteMemory() }).schema(v1).resource("doc");
    let error: any;
    try {
      app.build();
    } catch (caught) {
      error = caught;
    }
    expect(error?.code).toBe("DB_VECTOR_UNSUPPORTED");
    expect(error.message).toMatch(/doc\.embedding is a vector column/);
  });

  it("t.vector() checks its dimensions and distance, .index() the HNSW bound", () => {
    expect(() => schema("1").table("a", (t) => ({ v: t.vector(0) }))).toThrow(/from 1 to 16000/);
    expect(() => schema("1").table("a", (t) => ({ v: t.vector(2.5) }))).toThrow(/whole number/);
    expect(() => schema("1").table("a", (t) => ({ v: t.vector(3, { distance: "manhattan" as never }) }))).toThrow(/Unknown vector distance/);
    expect(() => schema("1").table("a", (t) => ({ v: t.vector(2001).index() }))).toThrow(/at most 2000 dimensions/);
  });

  it.skipIf(!process.env.DATABASE_URL)("PostgreSQL without pgvector: the migration fails with DB_VECTOR_EXTENSION_MISSING and leaves nothing behind", async () => {
    const database = await openDatabase("postgres");
    const app = new App({ name: "vectors", db: { dialect: database.dialect, kind: database.kind } }).schema(v1).resource("doc");
    const built = app.build();
    try {
      const { error } = await built.migrator.migrateToLatest();
      expect((error as any)?.code).toBe("DB_VECTOR_EXTENSION_MISSING");
      expect((error as Error).message).toMatch(/no pgvector extension.*Install pgvector/s);
      // Only this file's schema: introspecting every schema races other files altering theirs.
      const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(built.db);
      expect(rows.map((row) => row.name)).not.toContain("doc");
    } finally {
      await built.close();
      await database.close();
    }
  });
});
