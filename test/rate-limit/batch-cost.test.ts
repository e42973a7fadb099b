import { describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, request, rpc, sqliteMemory } from "../support/app.js";

// A batch of N items is N calls: it costs N counts of the rate limit, charged before anything runs.

const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();
const build = closeAfterEach();
const appWith = (max: number) => build(new App({ db: sqliteMemory(), rateLimit: { max, windowMs: 60_000 } }).schema(v1).resource("item").openapi());
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `item ${i}` }));
const headers = { "x-forwarded-for": "203.0.113.7" };

describe("batch writes under the rate limit", () => {
  it("costs one count per item: the remaining budget drops by N", async () => {
    const app = appWith(10);
    await app.migrator.migrateToLatest();
    const answer = await rpc(app, "item.batch", { create: items(4) }, headers);
    expect(answer.status).toBe(200);
    expect(answer.body.create).toHaveLength(4);
    expect(answer.headers.get("RateLimit-Remaining")).toBe("6");
    const next = await rpc(app, "item.list", {}, headers);
    expect(next.headers.get("RateLimit-Remaining")).toBe("5");
  });

  it("refuses a batch bigger than what is left with 429 before any item runs, and the items are consumed", async () => {
    const app = appWith(5);
    await app.migrator.migrateToLatest();
    const answer = await rpc(app, "item.batch", { create: items(6) }, headers);
    expect(answer.status).toBe(429);
    expect(answer.body.code).toBe("TOO_MANY_REQUESTS");
    expect(answer.body.message).toMatch(/costs 6 of the limit of 5/);
    expect(answer.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(answer.headers.get("RateLimit-Remaining")).toBe("0");
    expect(await app.db.selectFrom("item").selectAll().execute()).toEqual([]);
    // The window is spent: a single call is refused too.
    expect((await rpc(app, "item.list", {}, headers)).status).toBe(429);
  });

  it("charges REST batches the same, and an empty batch costs one", async () => {
    const app = appWith(3);
    await app.migrator.migrateToLatest();
    const empty = await request(app, "POST", "/rest/item/batch", { headers: { ...headers, "content-type": "application/json" }, body: "{}" });
    expect(empty.status).toBe(200);
    expect(empty.headers.get("RateLimit-Remaining")).toBe("2");
    const two = await request(app, "POST", "/rest/item/batch", { headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ create: items(2) }) });
    expect(two.status).toBe(200);
    expect(two.headers.get("RateLimit-Remaining")).toBe("0");
  });
});
