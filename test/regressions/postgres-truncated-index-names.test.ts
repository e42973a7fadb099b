/**
 * PostgreSQL cuts identifiers to 63 bytes. Two unique or indexed columns of a long-named table whose
 * index names (`{table}_{column}_key`, `_idx`) agree in their first 63 bytes built, migrated on
 * SQLite, and failed every start on the PostgreSQL family with `relation "..." already exists`, a
 * step error that says to fix the data. On the PostgreSQL family it is a `DdlError` at build naming
 * both columns and what to do; SQLite, which keeps the whole names, still migrates it.
 */
import { describe, expect, it } from "vitest";
import { DdlError } from "../../kernel/db/ddl.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { families, openDatabase } from "../support/databases.js";

const TABLE = "customer_subscription_billing_period_adjustments";
const v1 = schema("1").table(TABLE, (t) => ({ id: t.serial().primaryKey(), note: t.text().nullable() })).build();
// Added by a later version: the index names collide only once both exist.
const v2 = schema("2")
  .extend(v1)
  .table(TABLE, (t) => ({ externalReferenceA: t.text().nullable().unique(), externalReferenceB: t.text().nullable().index() }))
  .build();

describe.each(families())("index names longer than 63 bytes on %s", (family) => {
  it(family === "sqlite" ? "migrates" : "is a DdlError at build() naming both columns", async () => {
    const database = await openDatabase(family);
    try {
      const app = () => new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).schema(v2);
      if (family === "sqlite") {
        const { error } = await app().build().migrator.migrateToLatest();
        expect(error).toBeUndefined();
        return;
      }
      expect(() => app().build()).toThrow(DdlError);
      expect(() => app().build()).toThrow(
        `PostgreSQL cuts names to 63 bytes, so the indexes of ${TABLE}.externalReferenceA (version "2") and ${TABLE}.externalReferenceB (version "2") would both be named "customer_subscription_billing_period_adjustments_externalRefere". ` +
          "Shorten the table or column names so that the index names differ within their first 63 bytes.",
      );
    } finally {
      await database.close();
    }
  });
});
