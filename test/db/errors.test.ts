import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyDatabaseError } from "../../kernel/db/errors.js";
import { schema } from "../../kernel/schema/index.js";
import { families } from "../support/databases.js";
import { openHarness, type Harness } from "./harness.js";

const model = schema("1")
  .table("user", (t) => ({ id: t.serial().primaryKey(), email: t.text().unique() }))
  .table("post_tag", (t) => ({
    id: t.serial().primaryKey(),
    authorId: t.integer().references("user", "id"),
    title: t.text(),
    status: t.text().enum(["draft", "live"]).default("draft"),
  }))
  .build();

describe.each(families())("classifyDatabaseError on %s", (family) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(family, [model]);
    await h.db.insertInto("user").values({ email: "a@example.com" }).execute();
    await h.db.insertInto("post_tag").values({ authorId: 1, title: "t" }).execute();
  });
  afterAll(() => h?.close());

  const failure = (run: () => Promise<unknown>) => run().then(() => expect.unreachable("expected the statement to fail"), (error: unknown) => error);
  const classify = async (run: () => Promise<unknown>) => classifyDatabaseError(await failure(run), model);

  it("maps a unique violation to 409 naming table and column", async () => {
    expect(await classify(() => h.db.insertInto("user").values({ email: "a@example.com" }).execute())).toEqual({
      status: 409,
      code: "CONFLICT",
      message: "Unique constraint violated on user.email",
      data: { table: "user", column: "email", constraint: "user_email_key" },
    });
  });

  it("maps a duplicate primary key to 409", async () => {
    const info = await classify(() => h.db.insertInto("user").values({ id: 1, email: "b@example.com" }).execute());
    expect(info).toMatchObject({ status: 409, code: "CONFLICT", message: "Unique constraint violated on user.id" });
  });

  it("maps a missing referenced row to 409", async () => {
    const info = await classify(() => h.db.insertInto("post_tag").values({ authorId: 999, title: "x" }).execute());
    expect(info).toMatchObject({ status: 409, code: "CONFLICT" });
    expect(info!.message).toBe(
      h.kind === "postgres"
        ? "Foreign key constraint violated on post_tag.authorId: the referenced row does not exist"
        : "Foreign key constraint violated",
    );
  });

  it("maps deleting a still-referenced row to 409", async () => {
    const info = await classify(() => h.db.deleteFrom("user").where("id", "=", 1).execute());
    expect(info).toMatchObject({ status: 409, code: "CONFLICT" });
    if (h.kind === "postgres") expect(info!.message).toBe("Foreign key constraint violated on post_tag.authorId: the row is still referenced");
  });

  it("maps a not-null violation to 400 naming table and column", async () => {
    const info = await classify(() => h.db.insertInto("post_tag").values({ authorId: 1, title: null }).execute());
    expect(info).toEqual({
      status: 400,
      code: "BAD_REQUEST",
      message: "Not-null constraint violated on post_tag.title",
      data: { table: "post_tag", column: "title" },
    });
  });

  it("maps a check violation to 400, resolving underscores in names through the model", async () => {
    const info = await classify(() => h.db.insertInto("post_tag").values({ authorId: 1, title: "x", status: "gone" }).execute());
    expect(info).toEqual({
      status: 400,
      code: "BAD_REQUEST",
      message: "Check constraint violated on post_tag.status",
      data: { table: "post_tag", column: "status", constraint: "post_tag_status_check" },
    });
  });

  it("never repeats SQL or values in the message", async () => {
    const secret = "secret-value@example.com";
    await h.db.insertInto("user").values({ email: secret }).execute();
    const info = await classify(() => h.db.insertInto("user").values({ email: secret }).execute());
    expect(JSON.stringify(info)).not.toMatch(/secret-value|insert|values|\$1|\?/i);
  });

  it("leaves other errors to the caller (500)", async () => {
    expect(classifyDatabaseError(await failure(() => sql`select * from nowhere`.execute(h.kysely)))).toBeUndefined();
    expect(classifyDatabaseError(await failure(() => sql`selec 1`.execute(h.kysely)))).toBeUndefined();
    expect(classifyDatabaseError(new Error("boom"))).toBeUndefined();
    expect(classifyDatabaseError(null)).toBeUndefined();
    expect(classifyDatabaseError("23505")).toBeUndefined();
  });

  it("finds a constraint error wrapped as a cause", async () => {
    const inner = await failure(() => h.db.insertInto("user").values({ email: "a@example.com" }).execute());
    const wrapped = new Error("request failed", { cause: inner });
    expect(classifyDatabaseError(wrapped)).toMatchObject({ status: 409, message: "Unique constraint violated on user.email" });
  });
});
