import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { createFixtureApp } from "./fixture.js";

/** Hostile or out-of-range input must be a 400 naming the problem, never a 500, on every family. */
describe.each(families())("bad input on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof createFixtureApp>["start"]>>;
  const errors: unknown[] = [];
  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createFixtureApp(db, (error) => errors.push(error)).start();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const expect400 = async (name: string, input: unknown) => {
    const result = await rpc(app, name, input);
    expect(result.status, JSON.stringify(result.body)).toBe(400);
    expect(result.body.code).toBe("BAD_REQUEST");
    return result;
  };

  it("refuses values the column type cannot hold", async () => {
    const tooBig = await expect400("kitchen.create", { qty: 2_147_483_648 });
    expect(tooBig.body.message).toMatch(/qty/);
    await expect400("kitchen.list", { where: { qty: 2_147_483_648 } });
    await expect400("kitchen.list", { where: { ref: "not-a-uuid" } });
    await expect400("kitchen.list", { where: { ref: { in: ["nope"] } } });
    await expect400("kitchen.create", { label: "a\u0000b" });
    await expect400("kitchen.create", { day: "0000-01-01" });
    await expect400("kitchen.list", { where: { price: { gt: "1e999999" } } });
    expect(errors).toEqual([]);
  });

  it("bounds nesting and the number of values in a where", async () => {
    let not: unknown = "x";
    for (let i = 0; i < 3000; i++) not = { not: not };
    await expect400("kitchen.list", { where: { label: not } });
    const many = Array.from({ length: 14 }, () => ({ id: { in: Array.from({ length: 5000 }, (_, i) => i) } }));
    await expect400("kitchen.list", { where: { OR: many } });
    expect(errors).toEqual([]);
  });

  it("bounds jsonb nesting before validating it", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 2000; i++) deep = [deep];
    const result = await expect400("kitchen.create", { meta: deep });
    expect(result.body.message).toMatch(/meta/);
    expect(errors).toEqual([]);
  });
});
