import { z } from "zod";
import type { DatabaseConfig } from "../../kernel/index.js";
import { adminApp } from "./fixture.js";
import type { AdminConfig } from "../../plugins/admin/index.js";

/** The admin test app plus procedures of every shape the dashboard's runner meets. */
export function runnerApp(db: DatabaseConfig, admin: AdminConfig = {}, baseUrl?: string) {
  return adminApp(db, admin, baseUrl)
    .procedure("math.add", (base) =>
      base
        .input(
          z.object({
            a: z.number(),
            b: z.number(),
            mode: z.enum(["sum", "concat"]).default("sum"),
            note: z.string().min(3).optional(),
            tags: z.array(z.string()).optional(),
            loud: z.boolean().optional(),
          }),
        )
        .handler(({ input }) => ({ result: input.mode === "sum" ? input.a + input.b : `${input.a}${input.b}`, note: input.note ?? null, tags: input.tags ?? [], loud: input.loud ?? false })),
    )
    .procedure("whoami", (base) => base.handler(({ context }) => ({ email: context.user!.email })), { permission: "authenticated" })
    .procedure("clock.now", (base) => base.handler(() => ({ now: new Date("2026-01-02T03:04:05.000Z") })))
    .procedure("ticks", (base) =>
      base.handler(async function* () {
        yield 1;
      }),
    );
}
