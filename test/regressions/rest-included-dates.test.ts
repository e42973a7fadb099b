import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request, sqliteMemory } from "../support/app.js";

/**
 * docs/openapi.md: REST answers in plain JSON with "`date` columns as `YYYY-MM-DD`". The days are
 * picked by column name from the resource's own table (plugins/openapi/rest.ts), so an included
 * row's `date` column comes out as a full ISO instant, and an included row's `timestamp` column
 * that shares its name with one of the resource's `date` columns loses its time.
 */
const v1 = schema("1")
  .table("author", (t) => ({ id: t.serial().primaryKey(), name: t.text(), born: t.date(), since: t.timestamp() }))
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), since: t.date(), authorId: t.integer().references("author", "id") }))
  .relation("post", (rel) => ({ author: rel.belongsTo("author", { from: "authorId", to: "id" }) }))
  .build();

describe("REST plain JSON of included rows", () => {
  let app: any;
  beforeAll(async () => {
    app = await new App({ db: sqliteMemory() })
      .schema(v1)
      .resource("post", { permissions: { list: "public", get: "public" }, includable: ["author"] })
      .openapi()
      .start();
    await app.db.insertInto("author").values({ name: "ada", born: "1815-12-10", since: "2024-05-06T07:08:09.000Z" }).execute();
    await app.db.insertInto("post").values({ title: "notes", since: "2024-01-02", authorId: 1 }).execute();
  });
  afterAll(() => app?.close());

  it("writes every date column as its day and every timestamp as its instant, included rows too", async () => {
    const { status, body } = await request(app, "GET", "/rest/post/1?include[author]=true");
    expect(status).toBe(200);
    expect(body.since).toBe("2024-01-02");
    expect(body.author).toEqual({ id: 1, name: "ada", born: "1815-12-10", since: "2024-05-06T07:08:09.000Z" });
  });
});
