import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";

/**
 * A timestamp or date outside years 1 to 9999 ("0000-01-01T00:00:00Z", or an offset that carries a
 * valid-looking text past the range) passed the input schema, which turned it into a Date; the value
 * codec then refused it with "expected a Date or an ISO-8601 string for a timestamp column, got a
 * Date" (the admin API) or the same without the column (a resource's update). The input schema now
 * refuses it: the same 400 on both, naming the column and saying the date is out of range.
 */
const v1 = schema("1")
  .auth()
  .table("event", (t) => ({ id: t.serial().primaryKey(), title: t.text(), at: t.timestamp().nullable(), day: t.date().nullable() }))
  .build();

const OUT_OF_RANGE = "must be a date in years 0001 to 9999";
const cases: [string, string][] = [
  ["at", "0000-01-01T00:00:00Z"],
  ["at", "0001-01-01T00:00:00+01:00"],
  ["at", "9999-12-31T23:00:00-05:00"],
  ["day", "0000-01-01"],
];

describe.each(["pglite", "sqlite"] as const)("an out-of-range date written on %s", (family) => {
  let database: TestDatabase;
  let app: any;
  let admin: SignedIn;
  beforeAll(async () => {
    database = await openDatabase(family);
    app = await new App({ baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .resource("event", { permissions: { list: "public", get: "public", create: "public", update: "public" } })
      .admin()
      .start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    await app.db.insertInto("event").values({ title: "launch" }).execute();
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  for (const [column, value] of cases) {
    it(`_admin.data.update: ${column} = ${value} is a 400 naming the column`, async () => {
      const answer = await rpc(app, "_admin.data.update", { table: "event", where: { id: 1 }, data: { [column]: value } }, { cookie: admin.cookie });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: "BAD_REQUEST", message: `Invalid input: data.${column}: ${OUT_OF_RANGE}` });
    });

    it(`event.update: ${column} = ${value} is a 400 naming the column`, async () => {
      const answer = await rpc(app, "event.update", { where: { id: 1 }, data: { [column]: value } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("BAD_REQUEST");
      expect(answer.body.message).toBe(`Invalid input: data.${column}: ${OUT_OF_RANGE}`);
    });
  }

  it("a date in range is still written", async () => {
    const answer = await rpc(app, "event.update", { where: { id: 1 }, data: { at: "0001-01-01T00:00:00Z", day: "9999-12-31" } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ at: "0001-01-01T00:00:00.000Z", day: "9999-12-31T00:00:00.000Z" });
  });
});
