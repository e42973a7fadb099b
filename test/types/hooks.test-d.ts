import { describe, expectTypeOf, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { RpcError } from "../../presets/client.js";
import { schema } from "../../kernel/schema/index.js";
import type { WriteActor } from "../../kernel/index.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1")
  .auth()
  .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text(), done: t.boolean().default(false), ownerId: t.text().nullable() }))
  .build();

describe("resource hooks", () => {
  it("types the row and the data from the table, and the caller from the context", () => {
    new App({ db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789" })
      .resource("task", {
        ownerColumn: "ownerId",
        hooks: {
          beforeCreate({ data, trx, actor, user }) {
            expectTypeOf(data.title).toEqualTypeOf<string | undefined>();
            expectTypeOf(data.done).toEqualTypeOf<boolean | undefined>();
            expectTypeOf(actor).toEqualTypeOf<WriteActor>();
            expectTypeOf(user?.id).toEqualTypeOf<string | undefined>();
            expectTypeOf(trx.selectFrom).toBeFunction();
            if (!data.title) throw new RpcError("BAD_REQUEST", { message: "A title is needed" });
            return { ...data, title: data.title.trim() };
          },
          afterCreate({ row, context }) {
            expectTypeOf(row.id).toEqualTypeOf<number>();
            expectTypeOf(row.title).toEqualTypeOf<string>();
            expectTypeOf(context.db.selectFrom).toBeFunction();
          },
          beforeUpdate({ before, data }) {
            expectTypeOf(before.done).toEqualTypeOf<boolean>();
            expectTypeOf(data.done).toEqualTypeOf<boolean | undefined>();
          },
          afterUpdate({ before, row }) {
            expectTypeOf(before.title).toEqualTypeOf<string>();
            expectTypeOf(row.ownerId).toEqualTypeOf<string | null>();
          },
          beforeDelete({ row }) {
            expectTypeOf(row.id).toEqualTypeOf<number>();
          },
          afterDelete({ row, actor }) {
            expectTypeOf(row.title).toEqualTypeOf<string>();
            expectTypeOf(actor.admin).toEqualTypeOf<boolean>();
          },
        },
      });
  });

  // A hook name that does not exist is refused at the `.resource()` call (RESOURCE_HOOKS_INVALID).
  it("refuses data a column cannot hold", () => {
    new App({ db: sqliteMemory() })
      .schema(v1)
      .resource("task", {
        hooks: {
          // @ts-expect-error title is text: a hook cannot return a number for it
          beforeCreate: ({ data }) => ({ ...data, title: 1 }),
        },
      });
  });
});
