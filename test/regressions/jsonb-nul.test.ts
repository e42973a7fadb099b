import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/**
 * A NUL character (`\u0000`) in a jsonb value: PostgreSQL refuses it ("unsupported Unicode escape
 * sequence"), SQLite stored it. The same create answered 200 on one family
 * and 400 on the other, and data written on SQLite could not move to PostgreSQL. It is refused on
 * both, as NUL in text is, with the same 400; a backslash followed by `u0000` is text, not NUL.
 */
const v1 = schema("1").table("doc", (t) => ({ id: t.serial().primaryKey(), meta: t.jsonb().nullable() })).build();

describe.each<Family>(families())("jsonb values holding NUL, on %s", (family) => {
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    database = await openDatabase(family);
    built = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).resource("doc").build();
    await built.migrator.migrateToLatest();
  });
  afterAll(async () => {
    await built?.close();
    await database?.close();
  });

  it("refuses NUL anywhere in the value with the same 400", async () => {
    for (const meta of [{ a: "x\u0000y" }, "\u0000", ["ok", { "k\u0000": 1 }]]) {
      const { status, body } = await rpc(built, "doc.create", { meta });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: "BAD_REQUEST", status: 400, message: expect.stringContaining("NUL") });
    }
    expect((await rpc(built, "doc.list", {})).body).toEqual([]);
  });

  it("stores a backslash followed by u0000, which is text", async () => {
    const { status, body } = await rpc(built, "doc.create", { meta: { a: "\\u0000", b: "\\\\u0000" } });
    expect(status).toBe(200);
    expect(body).toEqual({ id: 1, meta: { a: "\\u0000", b: "\\\\u0000" } });
  });
});
