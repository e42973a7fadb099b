/**
 * Several apps in schemas of one PostgreSQL database: one app's migrations must not fail because
 * another app changes its own tables at the same moment. Kysely's introspector, which its migrator
 * asks whether the migration tables exist, reads every table of every schema and calls
 * `pg_get_serial_sequence` for each column; a column dropped by another session between its
 * catalog snapshot and that call failed the start with `column "..." of relation "..." does not exist`.
 */
import pg from "pg";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase } from "../support/databases.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";

const postgres = families().includes("postgres");

describe.runIf(postgres)("migrations beside another schema's DDL", () => {
  const url = process.env.DATABASE_URL!;
  const other = `t_churn_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  let churning = true;
  let churn: Promise<void>;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create schema ${other}`);
    // Wide enough that the introspection query is still reading it when the column goes.
    const columns = Array.from({ length: 40 }, (_, i) => `c${i} int`).join(", ");
    await admin.query(`create table ${other}.wide (id serial primary key, ${columns}, image text)`);
    churn = (async () => {
      while (churning) {
        await admin.query(`alter table ${other}.wide drop column image`);
        await admin.query(`alter table ${other}.wide add column image text`);
      }
    })();
  });
  afterAll(async () => {
    churning = false;
    await churn;
    await admin.query(`drop schema ${other} cascade`);
    await admin.end();
  });

  it("starts apps in fresh schemas while another schema's table loses and regains a column", async () => {
    const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
    for (let round = 0; round < 15; round++) {
      const database = await openDatabase("postgres");
      try {
        const app = await new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).resource("note").start();
        expect(await app.db.selectFrom("note").selectAll().execute()).toEqual([]);
        await app.close();
      } finally {
        await database.close();
      }
    }
  }, 120_000);
});
