import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { App, type InferRouter } from "../../presets/trellis.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import type { SessionUser } from "../../kernel/index.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1")
  .auth()
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    status: t.text().enum(["draft", "published"]).default("draft"),
    authorId: t.text(),
    ...timestamps(t),
  }))
  .build();

const app = new App({ db: sqliteMemory() })
  .schema(v1)
  .middleware(({ next }) => next({ context: { tenant: "acme" as const } }))
  .procedure("hello", (base) =>
    base.input(z.object({ name: z.string() })).handler(({ input, context }) => {
      expectTypeOf(context.tenant).toEqualTypeOf<"acme">();
      expectTypeOf(context.user).toEqualTypeOf<SessionUser | null>();
      return { greeting: `hi ${input.name}` };
    }),
  )
  .procedure("user.count", (base) =>
    base.handler(async ({ context }) => {
      const rows = await context.db.selectFrom("post").select(["id", "status"]).execute();
      expectTypeOf(rows[0].status).toEqualTypeOf<"draft" | "published">();
      return rows.length;
    }),
  )
  .resource("post", { ownerColumn: "authorId" });

type Client = ReturnType<ReturnType<typeof app.build>["client"]>;

describe("InferRouter and the in-process client", () => {
  it("types procedure inputs and outputs, nested by dots", () => {
    expectTypeOf<Parameters<Client["hello"]>[0]>().toEqualTypeOf<{ name: string }>();
    expectTypeOf<Awaited<ReturnType<Client["hello"]>>>().toEqualTypeOf<{ greeting: string }>();
    expectTypeOf<Awaited<ReturnType<Client["user"]["count"]>>>().toEqualTypeOf<number>();
    expectTypeOf<InferRouter<typeof app>>().toHaveProperty("post");
  });

  it("types resource inputs from the schema: serial and ownerColumn omitted, defaults optional", () => {
    type CreateInput = Parameters<Client["post"]["create"]>[0];
    expectTypeOf<CreateInput>().toHaveProperty("title").toEqualTypeOf<string>();
    expectTypeOf<CreateInput>().not.toHaveProperty("id");
    expectTypeOf<CreateInput>().not.toHaveProperty("authorId");
    expectTypeOf<{ title: string }>().toMatchTypeOf<CreateInput>();
    type Row = Awaited<ReturnType<Client["post"]["get"]>>;
    expectTypeOf<Row["createdAt"]>().toEqualTypeOf<Date>();
    expectTypeOf<Parameters<Client["post"]["get"]>[0]["where"]>().toEqualTypeOf<{ id: number }>();
  });

  it("rejects a resource whose table is not in the schema", () => {
    // @ts-expect-error "ghost" is not a table of v1
    app.resource("ghost");
  });
});
