import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/**
 * REST and MCP write a resource's `date` columns as days (`2024-05-06`), finding the rows inside an
 * answer by their columns. A page (`{ items, nextCursor }`) or a batch answer (`{ create, update,
 * delete }`) of a table with a column named `items` (or `create`, ...) was taken for a row itself,
 * so its rows' dates went out as midnight timestamps on `page` and `batch` while `list` and `get`
 * sent days.
 */
const v1 = schema("1")
  .table("order", (t) => ({ id: t.serial().primaryKey(), items: t.jsonb().nullable(), create: t.text().nullable(), due: t.date() }))
  .build();

describe.each<Family>(families())("days in REST answers of a table with an items column, on %s", (family) => {
  let database: TestDatabase;
  let app: any;
  beforeAll(async () => {
    database = await openDatabase(family);
    app = await new App({ db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .resource("order", { mcp: ["list", "page", "batch"] })
      .openapi()
      .mcp()
      .start();
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });
  const json = { "content-type": "application/json" };
  const row = { id: 1, items: ["tea"], create: null, due: "2024-05-06" };

  it("sends days on list, page and batch alike", async () => {
    const batch = await request(app, "POST", "/rest/order/batch", { headers: json, body: JSON.stringify({ create: [{ items: ["tea"], due: "2024-05-06" }] }) });
    expect(batch).toMatchObject({ status: 200, body: { create: [row], update: [], delete: [] } });
    expect(await request(app, "GET", "/rest/order")).toMatchObject({ status: 200, body: [row] });
    expect(await request(app, "POST", "/rest/order/page", { headers: json, body: "{}" })).toMatchObject({ status: 200, body: { items: [row], nextCursor: null } });
  });

  it("sends days on the MCP page tool", async () => {
    const response = await app.handle(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { ...json, accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "order_page", arguments: {} } }),
      }),
    );
    expect(response.status).toBe(200);
    expect((await response.json()).result.structuredContent).toEqual({ items: [row], nextCursor: null });
  });
});
