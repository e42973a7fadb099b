import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { schema } from "../../kernel/schema/index.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1").table("account", (t) => ({ id: t.serial().primaryKey(), email: t.text() })).build();

describe("context.jobs.send is typed by the jobs declared before", () => {
  it("takes declared names with their input, and refuses the rest", () => {
    new App({ db: sqliteMemory() })
      .schema(v1)
      .job("welcome", { input: z.object({ email: z.string() }) }, ({ data, context }) => {
        expectTypeOf(data).toEqualTypeOf<{ email: string }>();
        // The handler's context is the app's: the typed database and the jobs service.
        expectTypeOf(context.db.selectFrom("account").select("email").execute()).resolves.toEqualTypeOf<{ email: string }[]>();
      })
      .job("report", { input: z.object({ day: z.coerce.date() }) }, ({ data }) => {
        expectTypeOf(data.day).toEqualTypeOf<Date>();
      })
      .cron("cleanup", "0 * * * *", async ({ context }) => {
        await context.jobs.send("report", { day: "2026-01-01" });
      })
      .procedure("signup", (base) =>
        base.handler(async ({ context }) => {
          await context.jobs.send("welcome", { email: "a@b.c" });
          await context.jobs.send("report", { day: new Date() }, { startAfter: 60, priority: 1 });
          // @ts-expect-error: an unknown job
          await context.jobs.send("nope", {});
          // @ts-expect-error: the wrong data
          await context.jobs.send("welcome", { mail: "a@b.c" });
          return null;
        }),
      );
  });
});
